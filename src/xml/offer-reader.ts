import type { XmlElement } from 'libxml2-wasm';
import { dropUndefined } from '../domain/drop-undefined.js';
import { InvalidTerms, SchemaViolation } from '../domain/errors.js';
import type { AlternativeChoice } from '../domain/negotiation.js';
import { requestServingObjectives } from '../domain/objectives.js';
import type { GuaranteeTerm, ServiceRequest } from '../domain/terms.js';
import type { ReceivedOffer } from '../engine/ports.js';
import { alternativeOfferDocuments, checkAlternativeCount, hasChoices } from './alternatives.js';
import { date } from './datetime.js';
import { standaloneSource } from './canonical.js';
import { c14n, elementChildren } from './item-constraint.js';
import { withXml } from './libxml.js';
import { ns, prefixes, schemaFiles } from './namespaces.js';
import { declaredElementNames } from './schema-set.js';
import { attr, readGuaranteeTerm, readServiceRequest } from './terms-reader.js';
import { rejectBrowserMarkup } from './markup-guard.js';
import { all, one, text } from './xpath.js';

export { date };

export interface OfferContext {
  serviceProvider: string;
  expirationTime?: string;
  /** Context extension elements (canonical XML) the agreement keeps. */
  extensions: string[];
}

export interface XmlOfferParts {
  name?: string;
  templateId?: string;
  templateName?: string;
  request: ServiceRequest;
  guaranteeTerms: GuaranteeTerm[];
  serviceTermNames: string[];
  /** The wsag:AgreementOffer element with every namespace in scope declared on it (canonical.ts standaloneSource). */
  offerSource: string;
  context: OfferContext;
  /** The wsag:Terms element with every namespace in scope declared on it (canonical.ts standaloneSource). */
  termsSource: string;
  /** Whether the Terms hold ExactlyOne / OneOrMore compositors. */
  hasChoices: boolean;
  /** How many alternatives the Terms describe (1 without choices), counted when read: `alternatives()` builds them. */
  alternativeCount: number;
  alternative?: AlternativeChoice;
  accepts?: { offerId: string; negotiationId?: string };
  eligibleParties: string[];
  /** Its template's creation constraints, already checked where it was read (a document thread). */
  checked?: CheckedConstraints;
}

/**
 * Creation constraints checked against one template: per alternative (in `alternatives()` order), null when met, else
 * the violation's message.
 */
export interface CheckedConstraints {
  templateId: string;
  verdicts: Array<string | null>;
}

/**
 * An offer as received: the domain view the engine reads, plus the XML the adapter needs
 * again (creation constraints are XPath over it; the agreement copies its Terms).
 */
export class XmlReceivedOffer implements ReceivedOffer {
  readonly name?: string;
  readonly templateId?: string;
  readonly templateName?: string;
  readonly request: ServiceRequest;
  readonly guaranteeTerms: GuaranteeTerm[];
  readonly serviceTermNames: string[];
  /**
   * The wsag:AgreementOffer element as XML text of its own, not canonical: what the adapters parse again (creation
   * constraints, counter-offers, alternatives).
   */
  readonly offerSource: string;
  readonly context: OfferContext;
  /** The wsag:Terms element as XML text of its own, not canonical: what the agreement and counter-offers copy. */
  readonly termsSource: string;
  readonly alternative?: AlternativeChoice;
  readonly accepts?: { offerId: string; negotiationId?: string };
  readonly eligibleParties: string[];
  readonly expiresAt?: Date;
  /** How many offers `alternatives()` gives, known without building them. */
  readonly alternativeCount: number;
  readonly #hasChoices: boolean;
  readonly #parts: XmlOfferParts;
  #alternatives: XmlReceivedOffer[] | undefined;

  constructor(parts: XmlOfferParts) {
    this.#parts = parts;
    this.name = parts.name;
    this.templateId = parts.templateId;
    this.templateName = parts.templateName;
    this.request = parts.request;
    this.guaranteeTerms = parts.guaranteeTerms;
    this.serviceTermNames = parts.serviceTermNames;
    this.offerSource = parts.offerSource;
    this.context = parts.context;
    this.termsSource = parts.termsSource;
    this.alternative = parts.alternative;
    this.accepts = parts.accepts;
    this.eligibleParties = parts.eligibleParties;
    const expiresAt = date(parts.context.expirationTime, 'wsag:ExpirationTime');
    if (expiresAt) this.expiresAt = expiresAt;
    this.alternativeCount = parts.alternativeCount;
    this.#hasChoices = parts.hasChoices;
  }

  /**
   * What the offer was made from: plain data, so it can cross to another thread and be made into the same offer there.
   */
  toParts(): XmlOfferParts {
    return this.#parts;
  }

  /** The same offer, its creation constraints against a template checked. */
  withChecked(checked: CheckedConstraints): XmlReceivedOffer {
    return new XmlReceivedOffer({ ...this.#parts, checked });
  }

  /**
   * What was found checking this offer (one without choices) against the creation
   * constraints of template `templateId` where it was read: null when met, the violation's
   * message, or undefined when not checked there.
   */
  checkedVerdict(templateId: string): string | null | undefined {
    const checked = this.#parts.checked;
    return checked && checked.templateId === templateId && !this.#hasChoices ? checked.verdicts[0] : undefined;
  }

  /** Built on first use (see alternatives.ts): most offers have no choices. */
  alternatives(): XmlReceivedOffer[] {
    if (!this.#hasChoices) return [this];
    const checked = this.#parts.checked;
    this.#alternatives ??= alternativeOfferDocuments(this.offerSource).map((xml, i, documents) => {
      const alternative = withXml(xml, 'offer alternative', (doc) =>
        readOffer(doc.root, { index: i + 1, count: documents.length, terms: serviceTermNames(doc.root) }),
      );
      const verdict = checked?.verdicts.length === documents.length ? checked.verdicts[i] : undefined;
      return checked && verdict !== undefined
        ? alternative.withChecked({ templateId: checked.templateId, verdicts: [verdict] })
        : alternative;
    });
    return this.#alternatives;
  }
}

/** Context children the agreement writer writes itself: copying them would repeat or forge them. */
const serverWritten: Record<string, Set<string>> = {
  [ns.wsag]: new Set([
    'AgreementInitiator',
    'AgreementResponder',
    'ServiceProvider',
    'ExpirationTime',
    'TemplateId',
    'TemplateName',
  ]),
  [ns.wsagNeg]: new Set(['NegotiationExtension', 'RenegotiationExtension']),
  [ns.srv]: new Set(['AcceptedOffer', 'ChosenAlternative']),
  // Signatures in the agreement's Context are the parties' own (src/crypto); one sent in an offer is never copied.
  [ns.ds]: new Set(['Signature']),
};

/**
 * Maps a schema-valid wsag:AgreementOffer element to the domain. Semantic problems raise
 * InvalidTerms naming the element. `alternative` marks an offer that is one alternative of another.
 */
export function readOffer(offer: XmlElement, alternative?: AlternativeChoice): XmlReceivedOffer {
  return readOfferElement(offer, alternative, () => standaloneSource(offer));
}

/**
 * An offer whose Name, Context and Terms are children of another element (a
 * wsag-neg:NegotiationOffer), read as the wsag:AgreementOffer made of them, so template
 * Locations rooted at /wsag:AgreementOffer apply to it as to a CreateAgreement offer. The
 * parts are written out with their in-scope namespace declarations; nothing is parsed again.
 */
export function readEmbeddedOffer(parent: XmlElement): XmlReceivedOffer {
  return readOfferElement(parent, undefined, (termsSource, contextEl) => {
    const name = one(parent, 'wsag:Name');
    return (
      `<wsag:AgreementOffer xmlns:wsag="${ns.wsag}">${name ? standaloneSource(name) : ''}` +
      `${standaloneSource(contextEl)}${termsSource}</wsag:AgreementOffer>`
    );
  });
}

function readOfferElement(
  offer: XmlElement,
  alternative: AlternativeChoice | undefined,
  offerSourceOf: (termsSource: string, contextEl: XmlElement) => string,
): XmlReceivedOffer {
  const contextEl = one(offer, 'wsag:Context');
  const termsEl = one(offer, 'wsag:Terms');
  if (!contextEl || !termsEl) throw new InvalidTerms('wsag:AgreementOffer needs wsag:Context and wsag:Terms');
  rejectUnknownTermElements(termsEl);
  rejectBrowserMarkup(offer);
  const alternativeCount = checkAlternativeCount(termsEl);
  const extensions = elementChildren(contextEl)
    .filter((c) => !serverWritten[c.namespaceUri]?.has(c.name))
    .map(c14n);
  const { request, guaranteeTerms } = readTerms(termsEl);
  const termsSource = standaloneSource(termsEl);
  return new XmlReceivedOffer({
    name: text(offer, 'wsag:Name'),
    templateId: text(contextEl, 'wsag:TemplateId'),
    templateName: text(contextEl, 'wsag:TemplateName'),
    request,
    guaranteeTerms,
    serviceTermNames: serviceTermNames(offer),
    offerSource: offerSourceOf(termsSource, contextEl),
    context: dropUndefined({
      serviceProvider: text(contextEl, 'wsag:ServiceProvider') ?? 'AgreementResponder',
      expirationTime: text(contextEl, 'wsag:ExpirationTime'),
      extensions,
    }),
    termsSource,
    hasChoices: hasChoices(termsEl),
    alternativeCount,
    alternative,
    accepts: readAccepts(contextEl),
    eligibleParties: all(contextEl, 'srv:EligibleParty').map((e) => e.content.trim()),
  });
}

function readTerms(terms: XmlElement): Pick<XmlOfferParts, 'request' | 'guaranteeTerms'> {
  const guaranteeTerms = all(terms, './/wsag:GuaranteeTerm').map(readGuaranteeTerm);
  // The plan serves what the objectives promise: an sla:CompletedBy is a deadline it plans for.
  return { request: requestServingObjectives(readServiceRequest(terms), guaranteeTerms), guaranteeTerms };
}

/**
 * The offer after its time, node count or objective terms were edited in `root`, the root of
 * a document parsed from its offerSource (offer-slot.ts): the Terms are read again from the
 * edited XML, so the domain view matches it; what the edits do not touch (name, context,
 * parties, which term names and compositors there are) stays the offer's own.
 */
export function withEditedTerms(offer: XmlReceivedOffer, root: XmlElement): XmlReceivedOffer {
  const termsEl = one(root, 'wsag:Terms');
  if (!termsEl) throw new InvalidTerms('wsag:AgreementOffer needs wsag:Terms');
  // Verdicts on creation constraints were about the offer before the edits: they are not carried over.
  const { checked: _before, ...parts } = offer.toParts();
  return new XmlReceivedOffer({
    ...parts,
    ...readTerms(termsEl),
    termsSource: standaloneSource(termsEl),
    offerSource: standaloneSource(root),
  });
}

function serviceTermNames(offer: XmlElement): string[] {
  return all(offer, 'wsag:Terms//wsag:ServiceDescriptionTerm').map((t) => attr(t, 'Name') ?? '');
}

/**
 * GFD.193: an offer that accepts a committing counter-offer carries a NegotiationExtension
 * (RenegotiationExtension when renegotiating) in its Context; its NegotiationOfferContext's
 * CounterOfferTo names the accepted offer, its ResponderNegotiationEPR our negotiation.
 */
function readAccepts(context: XmlElement): XmlReceivedOffer['accepts'] {
  const extension = one(context, 'wsag-neg:NegotiationExtension | wsag-neg:RenegotiationExtension');
  if (!extension) return undefined;
  const offerId = text(extension, 'wsag-neg:NegotiationOfferContext/wsag-neg:CounterOfferTo');
  if (!offerId) {
    throw new InvalidTerms(
      `wsag-neg:${extension.name} needs wsag-neg:NegotiationOfferContext/wsag-neg:CounterOfferTo naming the ` +
        `offer it accepts`,
    );
  }
  const negotiationId = text(extension, 'wsag-neg:ResponderNegotiationEPR/wsa:ReferenceParameters/srv:NegotiationId');
  return dropUndefined({ offerId, negotiationId });
}

/**
 * Our term elements sit in lax extension points, where validation skips what it does not
 * know: a misspelt sla:Servicelevel would pass silently with everything inside it.
 */
let slaNames: Set<string> | undefined;
function rejectUnknownTermElements(terms: XmlElement): void {
  slaNames ??= declaredElementNames(schemaFiles[prefixes.sla as string] as string);
  for (const element of all(terms, './/sla:*')) {
    if (!slaNames.has(element.name)) {
      throw new SchemaViolation(
        `sla:${element.name} is not an element of the term language (${prefixes.sla}); check its spelling ` +
          `against docs/terms.md`,
      );
    }
  }
}
