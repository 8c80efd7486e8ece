import type { XmlElement } from 'libxml2-wasm';
import type { Negotiation } from '../domain/negotiation.js';
import { ns } from '../xml/namespaces.js';
import { readNegotiationRequest } from '../xml/negotiation-reader.js';
import { historyEntry, negotiableTemplate, negotiationPropertiesDocument } from '../xml/negotiation-writer.js';
import { SchemaSet } from '../xml/schema-set.js';
import { requiredChildren } from './body-children.js';
import { endpointReference, referenceParameter } from './endpoint-reference.js';
import type { Operation, OperationContext, Port } from './operation.js';
import { propertyKey, resourcePropertyOperations } from './resource-properties.js';
import type { SoapServices } from './services.js';

/** WS-Agreement Negotiation (GFD.193): the NegotiationFactory and Negotiation port types, each at its own path. */
export const negotiationPaths = {
  NegotiationFactory: '/wsag/NegotiationFactory',
  Negotiation: '/wsag/Negotiation',
} as const;

const action = (portType: string, message: string): string => `${ns.wsagNeg}/${portType}/${message}`;
const neg = `xmlns:wsag-neg="${ns.wsagNeg}"`;

export function negotiationEpr(element: string, baseUrl: string, id: string): string {
  return endpointReference(
    `wsag-neg:${element}`,
    ns.wsagNeg,
    baseUrl + negotiationPaths.Negotiation,
    'NegotiationId',
    id,
  );
}

export function negotiationPorts(services: SoapServices): Port[] {
  const negotiations = services.negotiations;
  const negotiationIdFrom = (ctx: OperationContext) => referenceParameter(ctx, 'NegotiationId');

  const initiate: Operation = {
    name: 'InitiateNegotiation',
    namespace: ns.wsagNeg,
    element: 'InitiateNegotiationInput',
    action: action('NegotiationFactory', 'InitiateNegotiationRequest'),
    responseAction: action('NegotiationFactory', 'InitiateNegotiationResponse'),
    async handle(ctx) {
      SchemaSet.get().validate(ctx.request.body, 'wsag-neg:InitiateNegotiationInput');
      const request = readNegotiationRequest(children(ctx.request.body, 'NegotiationContext')[0] as XmlElement);
      const negotiation = await negotiations.initiate(request, ctx.caller);
      return (
        `<wsag-neg:InitiateNegotiationOutput ${neg}>` +
        `${negotiationEpr('CreatedNegotiationEPR', ctx.baseUrl, negotiation.id)}</wsag-neg:InitiateNegotiationOutput>`
      );
    },
  };

  const negotiate: Operation = {
    name: 'Negotiate',
    namespace: ns.wsagNeg,
    element: 'NegotiateInput',
    action: action('Negotiation', 'NegotiateRequest'),
    responseAction: action('Negotiation', 'NegotiateResponse'),
    readsBodyFromText: true,
    async handle(ctx) {
      const offers = await services.offers.readNegotiationOffers(ctx.request, 'NegotiateInput');
      const counterOffers = await negotiations.negotiate(negotiationIdFrom(ctx), offers, ctx.caller);
      return (
        `<wsag-neg:NegotiateOutput ${neg}>${counterOffers.map((c) => c.document).join('')}` +
        `</wsag-neg:NegotiateOutput>`
      );
    },
  };

  const advertise: Operation = {
    name: 'Advertise',
    namespace: ns.wsagNeg,
    element: 'AdvertiseInput',
    action: action('Negotiation', 'AdvertiseRequest'),
    responseAction: action('Negotiation', 'AdvertiseResponse'),
    readsBodyFromText: true,
    async handle(ctx) {
      const offers = await services.offers.readNegotiationOffers(ctx.request, 'AdvertiseInput');
      await negotiations.advertise(negotiationIdFrom(ctx), offers, ctx.caller);
      return `<wsag-neg:AdvertiseOutput ${neg}/>`;
    },
  };

  const terminate: Operation = {
    name: 'Terminate',
    namespace: ns.wsagNeg,
    element: 'TerminateInput',
    action: action('Negotiation', 'TerminateRequest'),
    responseAction: action('Negotiation', 'TerminateResponse'),
    async handle(ctx) {
      SchemaSet.get().validate(ctx.request.body, 'wsag-neg:TerminateInput');
      await negotiations.terminate(negotiationIdFrom(ctx), ctx.caller);
      return `<wsag-neg:TerminateResponse ${neg}/>`;
    },
  };

  /** A renegotiation negotiates within the agreement's template; a negotiation within any. */
  const templatesOf = async (negotiation: Negotiation, ctx: OperationContext): Promise<string[]> => {
    const rendered = services.templates.render(ctx.now);
    if (negotiation.agreementId === undefined) return rendered;
    const { templateId } = await services.agreements.get(negotiation.agreementId, ctx.caller);
    const templates = services.templates.list(); // in the order render() uses
    return rendered.filter((_, i) => templates[i]?.id === templateId);
  };

  const negotiationOf = (ctx: OperationContext) => negotiations.get(negotiationIdFrom(ctx), ctx.caller);
  const properties = async (ctx: OperationContext) => {
    const negotiation = await negotiationOf(ctx);
    return {
      [propertyKey(ns.wsagNeg, 'NegotiationContext')]: [negotiation.context],
      [propertyKey(ns.wsagNeg, 'NegotiableTemplate')]: (await templatesOf(negotiation, ctx)).map(negotiableTemplate),
      [propertyKey(ns.wsagNeg, 'NegotiationOffer')]: negotiation.offers.map(historyEntry),
    };
  };
  const document = async (ctx: OperationContext) => {
    const negotiation = await negotiationOf(ctx);
    return negotiationPropertiesDocument(negotiation, await templatesOf(negotiation, ctx));
  };

  return [
    {
      name: 'NegotiationFactory',
      targetNamespace: ns.wsagNeg,
      path: negotiationPaths.NegotiationFactory,
      wsdlFile: 'NegotiationFactory.wsdl',
      operations: [initiate],
    },
    {
      name: 'Negotiation',
      targetNamespace: ns.wsagNeg,
      path: negotiationPaths.Negotiation,
      wsdlFile: 'Negotiation.wsdl',
      referenceParameter: 'NegotiationId',
      operations: [negotiate, advertise, terminate, ...resourcePropertyOperations(properties, document)],
    },
  ];
}

function children(parent: XmlElement, local: string): XmlElement[] {
  return requiredChildren(parent, ns.wsagNeg, `wsag-neg:${local}`);
}
