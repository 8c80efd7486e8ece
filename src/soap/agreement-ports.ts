import { XmlElement } from 'libxml2-wasm';
import { NotImplementedYet, SchemaViolation, UnknownResource } from '../domain/errors.js';
import { agreementProperties, agreementPropertiesDocument } from '../xml/agreement-properties.js';
import { escapeXml } from '../xml/escape.js';
import { ns } from '../xml/namespaces.js';
import { readOffer } from '../xml/offer-reader.js';
import { SchemaSet } from '../xml/schema-set.js';
import type { Operation, OperationContext, Port } from './operation.js';
import { propertyKey, resourcePropertyOperations } from './resource-properties.js';
import type { SoapServices } from './services.js';

/**
 * The five WS-Agreement port types, each at its own path. Handlers are thin: validate the
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
    `<wsag:AgreementFactoryProperties xmlns:wsag="${ns.wsag}">${services.templates.render(ctx.now).join('')}</wsag:AgreementFactoryProperties>`;

  const createAgreement: Operation = {
    name: 'CreateAgreement',
    namespace: ns.wsag,
    element: 'CreateAgreementInput',
    action: wsagAction('AgreementFactory', 'CreateAgreementRequest'),
    responseAction: wsagAction('AgreementFactory', 'CreateAgreementResponse'),
    async handle(ctx) {
      SchemaSet.get().validate(ctx.request.body, 'wsag:CreateAgreementInput');
      const offer = readOffer(child(ctx.request.body, 'AgreementOffer'));
      const agreement = await services.factory.createAgreement(offer, ctx.caller);
      return `<wsag:CreateAgreementResponse xmlns:wsag="${ns.wsag}">${agreementEpr('CreatedAgreementEPR', ctx.baseUrl, agreement.id)}</wsag:CreateAgreementResponse>`;
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

  const later = (name: string, element: string, portType: string): Operation => ({
    name,
    namespace: ns.wsag,
    element,
    action: wsagAction(portType, `${name}Request`),
    responseAction: wsagAction(portType, `${name}Response`),
    async handle() {
      throw new NotImplementedYet(`${portType}.${name} is not offered yet: create agreements with AgreementFactory.CreateAgreement`);
    },
  });

  return [
    {
      name: 'AgreementFactory',
      path: paths.AgreementFactory,
      wsdlFile: 'AgreementFactory.wsdl',
      operations: [createAgreement, ...resourcePropertyOperations(templateProperties, templateDocument)],
    },
    {
      name: 'PendingAgreementFactory',
      path: paths.PendingAgreementFactory,
      wsdlFile: 'PendingAgreementFactory.wsdl',
      operations: [
        later('CreatePendingAgreement', 'CreatePendingAgreementInput', 'PendingAgreementFactory'),
        ...resourcePropertyOperations(templateProperties, templateDocument),
      ],
    },
    {
      name: 'AgreementAcceptance',
      path: paths.AgreementAcceptance,
      wsdlFile: 'AgreementAcceptance.wsdl',
      operations: [
        later('Accept', 'AcceptAgreementInput', 'AgreementAcceptance'),
        later('Reject', 'RejectAgreementInput', 'AgreementAcceptance'),
      ],
    },
    {
      name: 'Agreement',
      path: paths.Agreement,
      wsdlFile: 'Agreement.wsdl',
      operations: [
        terminate,
        ...resourcePropertyOperations(agreementPropertyReader, async (ctx) => agreementPropertiesDocument(await agreementOf(ctx), 'AgreementProperties')),
      ],
    },
    {
      name: 'AgreementState',
      path: paths.AgreementState,
      wsdlFile: 'AgreementState.wsdl',
      operations: resourcePropertyOperations(agreementPropertyReader, async (ctx) =>
        agreementPropertiesDocument(await agreementOf(ctx), 'AgreementStateProperties'),
      ),
    },
  ];
}

/** The agreement EPR: the Agreement port's address plus the agreement id as a reference parameter. */
export function agreementEpr(element: string, baseUrl: string, id: string): string {
  return (
    `<wsag:${element} xmlns:wsa="${ns.wsa}" xmlns:srv="${ns.srv}">` +
    `<wsa:Address>${escapeXml(baseUrl + paths.Agreement)}</wsa:Address>` +
    `<wsa:ReferenceParameters><srv:AgreementId>${escapeXml(id)}</srv:AgreementId></wsa:ReferenceParameters>` +
    `</wsag:${element}>`
  );
}

/** The agreement a request is addressed to: the srv:AgreementId reference parameter in the SOAP header. */
function agreementIdFrom(ctx: OperationContext): string {
  const header = ctx.request.headers.find((h) => h.namespaceUri === ns.srv && h.name === 'AgreementId');
  const id = header?.content.trim();
  if (!id) {
    throw new UnknownResource(
      `no agreement addressed: send the srv:AgreementId reference parameter ({${ns.srv}}AgreementId) of the agreement's EPR as a SOAP header`,
    );
  }
  return id;
}

function child(parent: XmlElement, local: string): XmlElement {
  for (let c = parent.firstChild; c; c = c.next) {
    if (c instanceof XmlElement && c.namespaceUri === ns.wsag && c.name === local) return c;
  }
  throw new SchemaViolation(`wsag:${local} is missing from ${parent.name}`);
}
