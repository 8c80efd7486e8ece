/**
 * The work of a DocumentThreads thread, as plain functions over text: reading the offers of
 * CreateAgreement, Negotiate and Advertise requests exactly as the server's own thread would
 * (checking them against the creation constraints of `library`'s templates) and signing
 * agreements with `credentials`. The thread (document-worker.ts) exports them as piscina's
 * tasks; `npm run bench:documents` times them in one process.
 */
import type { XmlDocument, XmlElement } from 'libxml2-wasm';
import { WsagError } from '../domain/errors.js';
import { signAgreement, type SigningCredentials } from '../crypto/xml-signature.js';
import {
  agreementOfferElement,
  readAgreementOfferInput,
  type AgreementOfferInput,
} from '../soap/agreement-offer-input.js';
import { readEnvelope } from '../soap/envelope.js';
import { readNegotiationOffersInput, type NegotiationOfferInput } from '../soap/negotiation-offer-input.js';
import { parseXml } from '../xml/libxml.js';
import type { XmlNegotiationOffer } from '../xml/negotiation-reader.js';
import type { XmlOfferParts, XmlReceivedOffer } from '../xml/offer-reader.js';
import { withConstraintsChecked, type TemplateLibrary } from '../xml/template-library.js';

/** What a thread posts (piscina passes it on as the pool's 'message') once its tasks are loaded. */
export const THREAD_LOADED = 'wsag-document-thread-loaded';

/** A fault's class does not cross threads: its code and message do. */
export type ThreadFault = { fault: { code: string; message: string } };

/** An offer read, or the fault reading it raised. */
export type OfferReading = { parts: XmlOfferParts } | ThreadFault;

/** A negotiation offer with its offer's plain parts in place of the offer. */
export type NegotiationOfferParts = Omit<XmlNegotiationOffer, 'offer'> & { offer: XmlOfferParts };

/** The offers of a Negotiate or Advertise read, or the fault reading them raised. */
export type NegotiationOffersReading = { offers: NegotiationOfferParts[] } | ThreadFault;

export interface DocumentTasks {
  sign(document: string): string;
  /**
   * `text` passed the raw guard; the server's thread parsed the envelope without the
   * operation's content (readRequest), so the whole is parsed here, and a message that is not
   * well-formed is refused here.
   */
  readAgreementOffer(task: { text: string; input: AgreementOfferInput }): OfferReading;
  /** As readAgreementOffer, for the offers of a Negotiate or Advertise. */
  readNegotiationOffers(task: { text: string; input: NegotiationOfferInput }): NegotiationOffersReading;
}

export function documentTasks(options: { library?: TemplateLibrary; credentials?: SigningCredentials }): DocumentTasks {
  const { library, credentials } = options;
  const checked = (offer: XmlReceivedOffer, element?: XmlElement): XmlReceivedOffer =>
    library ? withConstraintsChecked(library, offer, element) : offer;
  return {
    sign(document) {
      if (!credentials) throw new Error('this document thread was started without signing credentials');
      return signAgreement(document, credentials);
    },
    readAgreementOffer({ text, input }) {
      // The offer's element is moved out of the envelope to check its creation constraints: read it first.
      return readingBody(text, (body) => ({
        parts: checked(readAgreementOfferInput(body, input), agreementOfferElement(body)).toParts(),
      }));
    },
    readNegotiationOffers({ text, input }) {
      return readingBody(text, (body) => ({
        offers: readNegotiationOffersInput(body, input).map((offer) => ({
          ...offer,
          offer: checked(offer.offer).toParts(),
        })),
      }));
    },
  };
}

/** `read` on the Body of the envelope `text`; a protocol fault it raises comes back as its code and message. */
function readingBody<T>(text: string, read: (body: XmlElement) => T): T | ThreadFault {
  let doc: XmlDocument | undefined;
  try {
    doc = parseXml(text, 'SOAP message');
    return read(readEnvelope(doc).body);
  } catch (error) {
    if (error instanceof WsagError) return { fault: { code: error.code, message: error.message } };
    throw error;
  } finally {
    doc?.dispose();
  }
}
