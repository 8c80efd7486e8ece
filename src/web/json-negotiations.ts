import type { XmlElement } from 'libxml2-wasm';
import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import { InvalidTerms, MalformedMessage, UnknownResource, UnknownTemplate } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { Negotiation } from '../domain/negotiation.js';
import type { AgreementFactory, AgreementService } from '../engine/agreements/index.js';
import type { NegotiationService } from '../engine/negotiation/index.js';
import { paths } from '../soap/agreement-ports.js';
import { negotiationPaths } from '../soap/negotiation-ports.js';
import { readNegotiationOffersInput, type NegotiationOfferInput } from '../soap/negotiation-offer-input.js';
import { acceptingOffer, negotiationOffer } from '../xml/accepting-offer.js';
import { leaseOffer, type LeaseChange } from '../xml/lease-offer.js';
import { withXml } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { initiateNegotiationInput } from '../xml/negotiation-input.js';
import { readNegotiationRequest } from '../xml/negotiation-reader.js';
import { SchemaSet } from '../xml/schema-set.js';
import { one } from '../xml/xpath.js';
import type { TemplateLibrary } from '../xml/template-library.js';
import { bodyWithin, jsonAnswer, jsonBody } from './json-body.js';
import { agreementView, offerDocument, type OfferRequest, readOfferDocument, servedTemplate } from './json-offers.js';
import { idempotentRoute, madeAlready, type Idempotency } from './idempotency.js';
import { validBody } from './openapi/validation.js';
import { negotiationSummary, offerSummary } from './summaries.js';

export interface NegotiationRoutesOptions {
  factory: AgreementFactory;
  agreements: AgreementService;
  negotiations: NegotiationService;
  templates: TemplateLibrary;
  maxBodyBytes: number;
  baseUrl: (req: Request) => string;
  now: () => Date;
  idempotency: Idempotency;
}

interface JsonOffer extends OfferRequest {
  /** Renegotiation: the change to the agreement (a lease's new end or node count). */
  change?: { until?: string; nodes?: number };
  state?: 'Advisory' | 'Solicited';
  counterOfferTo?: string;
  offerId?: string;
  expirationTime?: string;
}

/**
 * WS-Agreement Negotiation (GFD.193) over JSON: initiate (or renegotiate an agreement), send
 * Advisory and Solicited offers and read the counter-offers with their prices, holds and
 * expiry, advertise, accept a counter-offer (the agreement is made as an accepting
 * CreateAgreement makes it), terminate. Each offer is written as the wsag-neg:NegotiationOffer
 * a SOAP initiator would send and read by the readers the SOAP ports use, so both faces go
 * through one NegotiationService.
 */
export function negotiationRouter(
  options: NegotiationRoutesOptions,
  caller: (req: Request) => Caller,
  logger?: Logger,
): Router {
  const router = express.Router();
  const body = bodyWithin(options.maxBodyBytes);
  const answer = jsonAnswer(logger);
  const negotiationView = (req: Request, n: Negotiation) => ({
    ...negotiationSummary(n),
    links: {
      self: `/api/negotiations/${encodeURIComponent(n.id)}`,
      epr: options.baseUrl(req) + negotiationPaths.Negotiation,
    },
  });
  /** The offers of a Negotiate or Advertise, written and read as the SOAP Body would be. */
  const offersOf = async (req: Request, input: NegotiationOfferInput, who: Caller) => {
    const id = String(req.params.id);
    const { offers } = validBody<{ offers: JsonOffer[] }>(
      input === 'NegotiateInput' ? 'negotiate' : 'advertise',
      jsonBody(req),
    );
    const negotiation = await options.negotiations.get(id, who);
    // A change is made to the renegotiated agreement's own document.
    const renegotiated = negotiation.agreementId;
    const agreementXml =
      offers.some((o) => o.change) && renegotiated !== undefined
        ? (await options.agreements.get(renegotiated, who)).document
        : undefined;
    const elements = offers.map((offer, i) => {
      let counterOfferTo = offer.counterOfferTo;
      let document: string;
      if (offer.change) {
        if (!agreementXml)
          throw new InvalidTerms(`offers[${i}]: a change is offered in a renegotiation of an agreement only`);
        document = leaseOffer(agreementXml, changeOf(offer.change, i));
        counterOfferTo ??= negotiation.agreementId;
      } else {
        document = offerDocument(offer, (ref) => {
          const template = servedTemplate(options.templates, ref, options.now(), (m) => new UnknownTemplate(m));
          counterOfferTo ??= template.id;
          return template;
        });
      }
      if (counterOfferTo === undefined)
        throw new MalformedMessage(`offers[${i}]: say which offer it answers ("counterOfferTo")`);
      return negotiationOffer(document, {
        counterOfferTo,
        state: offer.state ?? 'Advisory',
        ...(offer.offerId !== undefined ? { offerId: offer.offerId } : {}),
        ...(offer.expirationTime !== undefined ? { expirationTime: offer.expirationTime } : {}),
      });
    });
    const xml = `<wsag-neg:${input} xmlns:wsag-neg="${ns.wsagNeg}">${elements.join('')}</wsag-neg:${input}>`;
    return withXml(xml, 'the offers', (doc) => readNegotiationOffersInput(doc.root, input));
  };

  router.post(
    '/api/negotiations',
    ...body,
    answer(
      'initiating a negotiation',
      async (req) => {
        const who = caller(req);
        const asked = validBody<{ agreement?: string; expirationTime?: string }>('initiateNegotiation', jsonBody(req));
        const input = initiateNegotiationInput(
          {
            ...(asked.agreement !== undefined ? { renegotiate: asked.agreement } : {}),
            ...(asked.expirationTime !== undefined ? { expirationTime: asked.expirationTime } : {}),
          },
          `${options.baseUrl(req)}${paths.Agreement}`,
        );
        // Checked and read as InitiateNegotiation's Body is.
        const request = withXml(input, 'the negotiation', (doc) => {
          SchemaSet.get().validate(doc.root, 'wsag-neg:InitiateNegotiationInput');
          return readNegotiationRequest(one(doc.root, 'wsag-neg:NegotiationContext') as XmlElement);
        });
        return negotiationView(req, await options.negotiations.initiate(request, who));
      },
      201,
    ),
  );
  router.post(
    '/api/negotiations/:id/offers',
    ...body,
    answer('negotiating', async (req) => {
      const who = caller(req);
      const offers = await offersOf(req, 'NegotiateInput', who);
      const answers = await options.negotiations.negotiate(String(req.params.id), offers, who);
      return { counterOffers: answers.map((o) => ({ ...offerSummary(o), document: o.document })) };
    }),
  );
  router.post(
    '/api/negotiations/:id/advertisements',
    ...body,
    answer('advertising', async (req) => {
      const who = caller(req);
      await options.negotiations.advertise(String(req.params.id), await offersOf(req, 'AdvertiseInput', who), who);
      return undefined;
    }),
  );
  router.post(
    '/api/negotiations/:id/offers/:offer/accept',
    idempotentRoute(options.idempotency, caller, logger)('accepting a counter-offer', 201, (req, who) => {
      const id = String(req.params.id);
      return {
        // Accepted already: the negotiation names the agreement it concluded with.
        made: async () => {
          const made = (await options.negotiations.get(id, who)).agreementCreated;
          const agreement = made === undefined ? undefined : await madeAlready(options.agreements, made, who);
          return agreement && agreementView(agreement, options.baseUrl(req));
        },
        make: async (agreementId) => {
          const negotiation = await options.negotiations.get(id, who);
          const counterOffer = negotiation.offers.find((o) => o.offerId === String(req.params.offer));
          if (!counterOffer)
            throw new UnknownResource(
              `negotiation ${id} has no offer "${String(req.params.offer)}"; GET /api/negotiations/${id} lists them`,
            );
          const offer = acceptingOffer(counterOffer.document, {
            negotiation: { address: options.baseUrl(req) + negotiationPaths.Negotiation, negotiationId: id },
          });
          const agreement = await options.factory.createAgreement(readOfferDocument(offer), who, { agreementId });
          return agreementView(agreement, options.baseUrl(req));
        },
      };
    }),
  );
  router.post(
    '/api/negotiations/:id/terminate',
    answer('terminating a negotiation', async (req) =>
      negotiationView(req, await options.negotiations.terminate(String(req.params.id), caller(req))),
    ),
  );
  return router;
}

function changeOf(change: { until?: string; nodes?: number }, i: number): LeaseChange {
  if ((change.until === undefined) === (change.nodes === undefined))
    throw new MalformedMessage(`offers[${i}].change: give "until" (a new end) or "nodes" (fewer nodes), one of them`);
  if (change.until !== undefined) {
    const until = new Date(change.until);
    if (Number.isNaN(until.getTime()))
      throw new MalformedMessage(`offers[${i}].change.until must be a date and time such as 2026-11-29T14:00:00Z`);
    return { until };
  }
  return { nodes: change.nodes as number };
}
