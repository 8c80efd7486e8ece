import { WsagClient } from '../../src/client/wsag-client.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';

/** One HTTP request as the fuzzer sends it: every byte and header under its control. */
export interface FuzzRequest {
  method: string;
  /** Path and query, e.g. /wsag/AgreementFactory or /api/agreements?limit=5. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export type Face = 'soap' | 'api' | 'static';

export function faceOf(request: FuzzRequest): Face {
  if (request.path.startsWith('/api/') || request.path === '/api') return 'api';
  if (/^\/wsag\/[A-Za-z]+$/.test(request.path.split('?')[0] as string) && request.method === 'POST') return 'soap';
  return 'static';
}

/**
 * Valid requests for every operation, recorded from a real client session against the
 * server under test (so every SOAP operation, the JSON /api and the static routes are
 * covered exactly as a client sends them): templates, create, pending create and decide,
 * state and properties, terminate, negotiation with Advisory and Solicited offers and its
 * properties, listings, plan, nodes, documents, reports, subscriptions, WSDLs and schemas.
 */
export async function recordSeeds(url: string): Promise<{ seeds: FuzzRequest[]; validOffer: string }> {
  const seeds: FuzzRequest[] = [];
  const recorder: typeof fetch = async (input, init) => {
    const target = new URL(String(input));
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const body =
      init?.body === undefined || init.body === null
        ? undefined
        : Buffer.from(typeof init.body === 'string' ? init.body : new Uint8Array(init.body as ArrayBuffer));
    seeds.push({
      method: init?.method ?? 'GET',
      path: target.pathname + target.search,
      headers,
      ...(body ? { body } : {}),
    });
    return fetch(input, init);
  };
  const client = new WsagClient(url, recorder);
  const quietly = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch {
      // A refusal is still a seed: the request was recorded before it was answered.
    }
  };
  const templates = Object.fromEntries(
    (await client.templates()).map((t) => [/<wsag:Name>([^<]+)</.exec(t)?.[1] as string, t]),
  );
  const template = (name: string) => templates[name] as string;
  const deadline = offerFromTemplate(template('deadline-job'));
  const reservation = offerFromTemplate(template('advance-reservation'), [{ location: 'NodeCount', value: '2' }]);
  const { agreementId } = await client.createAgreement(reservation);
  await quietly(() => client.createAgreement(deadline));
  await quietly(() => client.state(agreementId));
  await quietly(() => client.agreementProperty(agreementId, 'Terms'));
  await quietly(() => client.agreementDocument(agreementId));
  const pending = await client.createPendingAgreement(deadline);
  await quietly(() => client.decide(pending.agreementId, 'Accept'));
  const { negotiationId } = await client.initiateNegotiation();
  await quietly(() =>
    client.negotiate(negotiationId, [
      negotiationOffer(deadline, { counterOfferTo: 'deadline-job-v1', state: 'Advisory' }),
    ]),
  );
  await quietly(() =>
    client.negotiate(negotiationId, [
      negotiationOffer(reservation, { counterOfferTo: 'advance-reservation-v1', state: 'Solicited' }),
    ]),
  );
  await quietly(() => client.negotiationProperty(negotiationId, 'NegotiationOffer'));
  await quietly(() =>
    client.advertise(negotiationId, [
      negotiationOffer(deadline, { counterOfferTo: 'deadline-job-v1', state: 'Advisory' }),
    ]),
  );
  await quietly(() => client.negotiations());
  await quietly(() => client.negotiation(negotiationId));
  await quietly(() => client.terminateNegotiation(negotiationId));
  await quietly(() => client.agreements());
  await quietly(() => client.plan());
  await quietly(() => client.nodes());
  await quietly(() => client.terminate(agreementId));
  await quietly(() => client.terminate(pending.agreementId));
  seeds.push(
    { method: 'GET', path: `/api/agreements/${agreementId}/report`, headers: {} },
    {
      method: 'POST',
      path: `/api/agreements/${agreementId}/subscriptions`,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"url":"http://127.0.0.1:9/hook"}'),
    },
    {
      method: 'PUT',
      path: `/api/agreements/${agreementId}/countersignature`,
      headers: { 'content-type': 'application/xml' },
      body: Buffer.from('<x/>'),
    },
    { method: 'GET', path: '/wsag/AgreementFactory?wsdl', headers: {} },
    { method: 'GET', path: '/schemas/sla-terms.xsd', headers: {} },
    { method: 'GET', path: '/healthz', headers: {} },
  );
  return { seeds, validOffer: reservation };
}
