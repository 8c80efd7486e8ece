import type { XmlElement } from 'libxml2-wasm';
import { c14n } from '../xml/item-constraint.js';
import { agreementProperties, agreementPropertiesDocument } from '../xml/agreement-properties.js';
import { ns } from '../xml/namespaces.js';
import { SchemaSet } from '../xml/schema-set.js';
import { childElements } from './body-children.js';
import { endpointReference, referenceParameter } from './endpoint-reference.js';
import type { Operation, OperationContext, Port } from './operation.js';
import { propertyKey, resourcePropertyOperations } from './resource-properties.js';
import type { SoapServices } from './services.js';

/**
 * The five WS-Agreement port types, each at its own path (negotiation: negotiation-ports.ts). Handlers are thin:
 * validate the
 * Body against our schemas, map it to the domain, call the engine, write the response.
 */
export const paths = {
  AgreementFactory: '/wsag/AgreementFactory',
  PendingAgreementFactory: '/wsag/PendingAgreementFactory',
  AgreementAcceptance: '/wsag/AgreementAcceptance',
  Agreement: '/wsag/Agreement',
  AgreementState: '/wsag/AgreementState',
} as const;

const wsagAction = (portType: string, message: string): string => `${ns.wsag}/${portType}/${message}`;

export function agreementPorts(services: SoapServices): Port[] {
  const templateProperties = async (ctx: OperationContext) => ({
    [propertyKey(ns.wsag, 'Template')]: services.templates.render(ctx.now),
  });
  const templateDocument = async (ctx: OperationContext) =>
    `<wsag:AgreementFactoryProperties xmlns:wsag="${ns.wsag}">${services.templates.render(ctx.now).join('')}` +
    `</wsag:AgreementFactoryProperties>`;

  const createAgreement: Operation = {
    name: 'CreateAgreement',
    namespace: ns.wsag,
    element: 'CreateAgreementInput',
    action: wsagAction('AgreementFactory', 'CreateAgreementRequest'),
    responseAction: wsagAction('AgreementFactory', 'CreateAgreementResponse'),
    readsBodyFromText: true,
    async handle(ctx) {
      const offer = await services.offers.readAgreementOffer(ctx.request, 'CreateAgreementInput');
      const agreement = await services.factory.createAgreement(offer, ctx.caller);
      return (
        `<wsag:CreateAgreementResponse xmlns:wsag="${ns.wsag}">` +
        `${agreementEpr('CreatedAgreementEPR', ctx.baseUrl, agreement.id)}</wsag:CreateAgreementResponse>`
      );
    },
  };

  const agreementOf = async (ctx: OperationContext) => services.agreements.get(agreementIdFrom(ctx), ctx.caller);
  const agreementPropertyReader = async (ctx: OperationContext) => {
    const p = agreementProperties(await agreementOf(ctx));
    return Object.fromEntries(Object.entries(p).map(([local, values]) => [propertyKey(ns.wsag, local), values]));
  };

  const terminate: Operation = {
    name: 'Terminate',
    namespace: ns.wsag,
    element: 'TerminateInput',
    action: wsagAction('Agreement', 'TerminateRequest'),
    responseAction: wsagAction('Agreement', 'TerminateResponse'),
    async handle(ctx) {
      SchemaSet.get().validate(ctx.request.body, 'wsag:TerminateInput');
      await services.agreements.terminate(agreementIdFrom(ctx), ctx.caller);
      return `<wsag:TerminateResponse xmlns:wsag="${ns.wsag}"/>`;
    },
  };

  const createPendingAgreement: Operation = {
    name: 'CreatePendingAgreement',
    namespace: ns.wsag,
    element: 'CreatePendingAgreementInput',
    action: wsagAction('PendingAgreementFactory', 'CreatePendingAgreementRequest'),
    responseAction: wsagAction('PendingAgreementFactory', 'CreatePendingAgreementResponse'),
    async handle(ctx) {
      const offer = await services.offers.readAgreementOffer(ctx.request, 'CreatePendingAgreementInput');
      const acceptanceEpr = optionalChild(ctx.request.body, 'AgreementAcceptanceEPR');
      const agreement = await services.factory.createPendingAgreement(
        offer,
        ctx.caller,
        acceptanceEpr && c14n(acceptanceEpr),
      );
      return (
        `<wsag:CreatePendingAgreementResponse xmlns:wsag="${ns.wsag}">` +
        `${agreementEpr('CreatedAgreementEPR', ctx.baseUrl, agreement.id)}</wsag:CreatePendingAgreementResponse>`
      );
    },
  };

  /** The provider's decision on a pending agreement addressed by srv:AgreementId (operators only). */
  const decision = (name: 'Accept' | 'Reject'): Operation => ({
    name,
    namespace: ns.wsag,
    element: `${name}AgreementInput`,
    action: wsagAction('AgreementAcceptance', `${name}Request`),
    responseAction: wsagAction('AgreementAcceptance', `${name}Response`),
    async handle(ctx) {
      SchemaSet.get().validate(ctx.request.body, `wsag:${name}AgreementInput`);
      await services.agreements.decide(agreementIdFrom(ctx), name, ctx.caller);
      return `<wsag:${name}AgreementResponse xmlns:wsag="${ns.wsag}"/>`;
    },
  });

  return [
    {
      name: 'AgreementFactory',
      targetNamespace: ns.wsag,
      path: paths.AgreementFactory,
      wsdlFile: 'AgreementFactory.wsdl',
      operations: [createAgreement, ...resourcePropertyOperations(templateProperties, templateDocument)],
    },
    {
      name: 'PendingAgreementFactory',
      targetNamespace: ns.wsag,
      path: paths.PendingAgreementFactory,
      wsdlFile: 'PendingAgreementFactory.wsdl',
      operations: [createPendingAgreement, ...resourcePropertyOperations(templateProperties, templateDocument)],
    },
    {
      name: 'AgreementAcceptance',
      targetNamespace: ns.wsag,
      path: paths.AgreementAcceptance,
      wsdlFile: 'AgreementAcceptance.wsdl',
      referenceParameter: 'AgreementId',
      operations: [decision('Accept'), decision('Reject')],
    },
    {
      name: 'Agreement',
      targetNamespace: ns.wsag,
      path: paths.Agreement,
      wsdlFile: 'Agreement.wsdl',
      referenceParameter: 'AgreementId',
      operations: [
        terminate,
        ...resourcePropertyOperations(agreementPropertyReader, async (ctx) =>
          agreementPropertiesDocument(await agreementOf(ctx), 'AgreementProperties'),
        ),
      ],
    },
    {
      name: 'AgreementState',
      targetNamespace: ns.wsag,
      path: paths.AgreementState,
      wsdlFile: 'AgreementState.wsdl',
      referenceParameter: 'AgreementId',
      operations: resourcePropertyOperations(agreementPropertyReader, async (ctx) =>
        agreementPropertiesDocument(await agreementOf(ctx), 'AgreementStateProperties'),
      ),
    },
  ];
}

/** The agreement EPR: the Agreement port's address plus the agreement id as a reference parameter. */
export function agreementEpr(element: string, baseUrl: string, id: string): string {
  return endpointReference(`wsag:${element}`, ns.wsag, baseUrl + paths.Agreement, 'AgreementId', id);
}

const agreementIdFrom = (ctx: OperationContext): string => referenceParameter(ctx, 'AgreementId');

function optionalChild(parent: XmlElement, local: string): XmlElement | undefined {
  return childElements(parent, ns.wsag, local)[0];
}
