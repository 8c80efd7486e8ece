import { type Client, createClientAsync } from 'soap';
import type { StackResult } from './stack-result.js';

/**
 * The interop scenario with node-soap (npm "soap"), from the combined WSDLs, calling each
 * port's SOAP 1.1 binding. Answers are typed from the WSDLs (attributes under "attributes",
 * simple content under "$value"). The reference parameter header is a typed object in the srv
 * namespace; the wildcards are filled with prefixed keys (srv:Reason, neg:NegotiationExtension),
 * except the terms' content, given as XML ($xml).
 */
const NEG = 'http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation';
const SRV = 'http://schemas.wsag-server.org/2026/11/server';
const ports = [
  'AgreementFactory',
  'PendingAgreementFactory',
  'AgreementAcceptance',
  'Agreement',
  'AgreementState',
  'NegotiationFactory',
  'Negotiation',
] as const;
type PortName = (typeof ports)[number];

// node-soap's answers are plain objects shaped by the WSDL; this scenario reads them as such.
// biome-ignore lint/suspicious/noExplicitAny: untyped SOAP answers
type Answer = any;

export async function nodeSoapScenario(base: string, terms: string): Promise<StackResult> {
  // node-soap reports what it cannot read of a WSDL through console.warn and process warnings.
  const warnings: string[] = [];
  const warn = console.warn;
  const onWarning = (warning: Error) => warnings.push(warning.message);
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  process.on('warning', onWarning);
  const clients = {} as Record<PortName, Client>;
  try {
    for (const port of ports) clients[port] = await createClientAsync(`${base}/wsag/${port}?wsdl`);
  } finally {
    console.warn = warn;
    process.off('warning', onWarning);
  }
  const call = (port: PortName, operation: string, input: object): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const method = clients[port][`${port}Service`][`${port}Soap11Port`][operation];
      method(input, (error: Error | null, answer: Answer) => (error ? reject(error) : resolve(answer)));
    });
  const addressed = (port: PortName, name: 'AgreementId' | 'NegotiationId', id: string) => {
    clients[port].clearSoapHeaders();
    clients[port].addSoapHeader({ [name]: id }, name, 'srv', SRV);
  };
  const state = async (id: string) => {
    addressed('AgreementState', 'AgreementId', id);
    return (await call('AgreementState', 'GetResourcePropertyDocument', {})).AgreementStateProperties.AgreementState
      .State as string;
  };

  const templates: Answer[] = (await call('AgreementFactory', 'GetResourcePropertyDocument', {}))
    .AgreementFactoryProperties.Template;
  const template = templates.find((t) => t.Name === 'advance-reservation');
  const context = (c: Answer) => ({
    ...(c.AgreementInitiator ? { AgreementInitiator: c.AgreementInitiator } : {}),
    ...(c.AgreementResponder ? { AgreementResponder: c.AgreementResponder } : {}),
    ServiceProvider: c.ServiceProvider,
    TemplateId: c.TemplateId,
    TemplateName: c.TemplateName,
  });
  const offer = (c: Answer) => ({ Name: template.Name, Context: context(c), Terms: { $xml: terms } });

  // One-shot: create, read the state through the reference parameter header, terminate.
  const created = (await call('AgreementFactory', 'CreateAgreement', { AgreementOffer: offer(template.Context) }))
    .CreatedAgreementEPR;
  const agreementId = created.ReferenceParameters.AgreementId as string;
  const result: StackResult = {
    stack: 'node-soap',
    loaded: [...ports].sort(),
    warnings,
    templates: templates.map((t) => t.Name as string).sort(),
    created: { address: created.Address, state: await state(agreementId) },
  };
  addressed('Agreement', 'AgreementId', agreementId);
  await call('Agreement', 'Terminate', { 'srv:Reason': 'ended by the node-soap interop test' });
  result.terminated = await state(agreementId);

  // Negotiation: Advisory slots with their quotes, a Solicited offer held, accepted.
  const negotiationEpr = (
    await call('NegotiationFactory', 'InitiateNegotiation', {
      NegotiationContext: { NegotiationType: { Negotiation: {} }, AgreementResponder: 'NegotiationResponder' },
    })
  ).CreatedNegotiationEPR;
  addressed('Negotiation', 'NegotiationId', negotiationEpr.ReferenceParameters.NegotiationId);
  let offers = 0;
  const negotiate = async (counterOfferTo: string, offerState: string): Promise<Answer[]> =>
    (
      await call('Negotiation', 'Negotiate', {
        NegotiationOffer: [
          {
            attributes: { 'wsag-neg:OfferId': `node-soap-${++offers}` },
            ...offer(template.Context),
            NegotiationOfferContext: {
              CounterOfferTo: counterOfferTo,
              Creator: 'NegotiationInitiator',
              State: { [offerState]: {} },
            },
            NegotiationConstraints: {},
          },
        ],
      })
    ).NegotiationCounterOffer;
  const summary = (counterOffer: Answer) => {
    const c = counterOffer.NegotiationOfferContext;
    const price = c.Quote?.Price;
    return {
      offerId: counterOffer.attributes['wsag-neg:OfferId'] as string,
      state: Object.keys(c.State)[0] ?? null,
      expirationTime: c.ExpirationTime ?? null,
      price: price ? { amount: Number(price.$value), currency: price.attributes.Currency as string } : null,
    };
  };
  const advisory = (await negotiate(template.Context.TemplateId, 'Advisory')).map(summary);
  result.advisory = advisory;
  const [acceptable] = await negotiate(advisory[0]?.offerId ?? '', 'Solicited');
  result.solicited = summary(acceptable);

  const extension = {
    attributes: { 'xmlns:neg': NEG },
    'neg:NegotiationOfferContext': {
      'neg:CounterOfferTo': result.solicited.offerId,
      'neg:Creator': 'NegotiationInitiator',
      'neg:State': { 'neg:Acceptable': {} },
    },
  };
  const accepted = (
    await call('AgreementFactory', 'CreateAgreement', {
      AgreementOffer: {
        Name: acceptable.Name,
        Context: { ...context(acceptable.Context), 'neg:NegotiationExtension': extension },
        Terms: { $xml: terms },
      },
    })
  ).CreatedAgreementEPR;
  const acceptedId = accepted.ReferenceParameters.AgreementId as string;
  result.accepted = { agreementId: acceptedId, state: await state(acceptedId) };

  // A typed fault: the BaseFault detail as the WSDL declares it.
  addressed('Agreement', 'AgreementId', 'no-such-agreement');
  try {
    await call('Agreement', 'Terminate', { 'srv:Reason': 'no such agreement' });
    result.fault = null;
  } catch (error) {
    const detail = (error as Answer).root?.Envelope?.Body?.Fault?.detail;
    const code = detail?.BaseFault?.ErrorCode;
    result.fault = { code: typeof code === 'object' ? code.$value : code };
  }
  return result;
}
