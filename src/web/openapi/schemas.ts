import { agreementStates } from '../../domain/agreement.js';
import type { Json } from './route-doc.js';

const text = { type: 'string' };
const time = { type: 'string', format: 'date-time' };

/**
 * The shapes the JSON face reads and writes (components.schemas). Request bodies are strict
 * (a field the API does not know is refused by name); answers list what they carry and may
 * carry more as the API grows.
 */
export const schemas: Record<string, Json> = {
  Problem: {
    type: 'object',
    description:
      'An RFC 9457 problem document: `type` names the fault (docs/faults.md), `title` is its code, the same ' +
      'fault names as SOAP',
    required: ['type', 'title', 'status', 'detail'],
    properties: {
      type: { type: 'string', format: 'uri' },
      title: text,
      status: { type: 'integer' },
      detail: text,
      error: { ...text, description: 'the fault code again (earlier clients read it)' },
      message: { ...text, description: 'the detail again (earlier clients read it)' },
      technicalDetail: { ...text, description: "a schema validator's own words, where the detail says it plainly" },
    },
  },
  Links: {
    type: 'object',
    description: 'where to read the resource again: its JSON view, and for an agreement its signed XML document',
    properties: { self: text, document: text, epr: { ...text, description: 'the SOAP endpoint of the agreement' } },
  },
  Agreement: {
    type: 'object',
    required: ['id', 'state', 'links'],
    properties: {
      id: text,
      name: text,
      state: {
        type: 'string',
        enum: [...agreementStates],
      },
      template: text,
      initiator: text,
      guarantee: text,
      nodes: { type: 'integer' },
      start: time,
      end: time,
      price: { type: 'object' },
      createdAt: time,
      links: { $ref: '#/components/schemas/Links' },
    },
  },
  TemplateItem: {
    type: 'object',
    required: ['name', 'settable', 'takes'],
    properties: {
      name: { ...text, description: 'the name a value is given under (`items` of a create)' },
      value: { ...text, description: "the template's own value" },
      settable: { type: 'boolean', description: 'whether a value can set it (structural constraints cannot)' },
      takes: { ...text, description: 'the values it takes, in words' },
      constraint: { type: 'array', items: { type: 'object' } },
    },
  },
  Template: {
    type: 'object',
    required: ['id', 'name', 'items', 'links'],
    properties: {
      id: text,
      name: text,
      items: { type: 'array', items: { $ref: '#/components/schemas/TemplateItem' } },
      window: { type: 'object', properties: { start: time, end: time }, description: "a reservation's window" },
      links: { $ref: '#/components/schemas/Links' },
    },
  },
  CreateAgreement: {
    type: 'object',
    description:
      'An agreement from a template and item values (as `wsag create --template NAME --set NAME=VALUE`), or from a ' +
      'whole wsag:AgreementOffer document; `pending` asks for a pending agreement (the provider decides later)',
    additionalProperties: false,
    properties: {
      template: { ...text, minLength: 1, description: "the template's Name or TemplateId" },
      items: {
        type: 'object',
        description: "values by Item name (a reservation's StartTime, EndTime and Duration too), or by XPath",
        additionalProperties: { type: ['string', 'number', 'boolean'] },
      },
      offer: { ...text, minLength: 1, description: 'a wsag:AgreementOffer document (XML)' },
      pending: { type: 'boolean' },
    },
  },
  InitiateNegotiation: {
    type: 'object',
    description: 'a negotiation (InitiateNegotiation); with `agreement`, a renegotiation of that agreement',
    additionalProperties: false,
    properties: {
      agreement: { ...text, minLength: 1, description: 'the agreement to renegotiate' },
      expirationTime: { ...time, description: "the initiator's wish for the negotiation's lifetime" },
    },
  },
  NegotiationOffers: {
    type: 'object',
    required: ['offers'],
    additionalProperties: false,
    properties: {
      offers: {
        type: 'array',
        minItems: 1,
        maxItems: 16,
        items: {
          type: 'object',
          description:
            'an offer as a template and items, an offer document, or (renegotiation) a change of the agreement; ' +
            '`counterOfferTo` defaults to the template (a first offer) or the agreement renegotiated',
          additionalProperties: false,
          properties: {
            template: { ...text, minLength: 1 },
            items: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
            offer: { ...text, minLength: 1 },
            change: {
              type: 'object',
              additionalProperties: false,
              properties: { until: time, nodes: { type: 'integer', minimum: 1 } },
            },
            state: {
              enum: ['Advisory', 'Solicited'],
              description: 'Advisory (default): non-binding; Solicited: a binding answer',
            },
            counterOfferTo: text,
            offerId: text,
            expirationTime: time,
          },
        },
      },
    },
  },
  Page: {
    type: 'array',
    description:
      'a page of a listing, oldest first: `?limit=` (at most 500) and `?after=`; a Link header (rel="next") says ' +
      'where the next page starts',
    items: { type: 'object' },
  },
};
