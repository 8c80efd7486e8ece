import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsFetch } from '../../src/client/tls-fetch.js';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { issueEndEntity } from '../../src/crypto/certificate-authority.js';
import { loadCredential, type Credential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { nameFromParts } from '../../src/crypto/distinguished-name.js';
import { certificatePem, privateKeyPem } from '../../src/crypto/pem.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { ns } from '../../src/xml/namespaces.js';
import { deadlineOffer, reservationOffer } from '../engine/run-time-support.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The whole authorisation matrix from one table. Every route the server answers
 * (read from its router) and every SOAP operation has a rule here; each is called by every
 * kind of caller: anonymous on plain HTTP, TLS without a certificate, an untrusted CA, an
 * expired certificate, the owner (alice), another user (bob) and an operator. A route
 * added without a rule fails the first test.
 */
type Rule = 'public' | 'party' | 'owner' | 'initiator' | 'operator' | 'soap';
/** `allowed`: answered, or refused for a reason past authorisation (the state of the object); anything else names its status or fault. */
type Outcome = 'allowed' | 'unauthenticated' | 'refused' | string;
type Caller = 'plain' | 'no certificate' | 'untrusted CA' | 'expired' | 'owner' | 'other' | 'operator';
const callers: Caller[] = ['plain', 'no certificate', 'untrusted CA', 'expired', 'owner', 'other', 'operator'];

interface Fixtures {
  agreement: string;
  migrating: string;
  negotiation: string;
  account: string;
  usage: string;
  subscription: () => Promise<string>;
  pending: () => Promise<string>;
  fresh: () => Promise<string>;
  /** A negotiation of alice's, and an Acceptable counter-offer in it. */
  acceptable: () => Promise<{ negotiation: string; offer: string }>;
}
interface Row {
  rule: Rule;
  call?: (who: Caller, f: Fixtures) => Promise<Outcome>;
  /** A listing: what the other party must not see in it. */
  hides?: (f: Fixtures) => string;
}

let server: TestServer;
let pki: string;
const credentials = new Map<Caller, Credential>();
const seen = new Map<string, string>();

const ca = () => fs.readFileSync(path.join(pki, 'ca.pem'), 'utf8');
function fetcherFor(who: Caller): typeof fetch {
  if (who === 'plain') return fetch;
  const credential = credentials.get(who);
  return tlsFetch({
    cert: credential ? [credential.certificate, ...credential.chain].map(certificatePem).join('') : '',
    key: credential ? privateKeyPem(credential.privateKey) : '',
    ca: ca(),
  });
}
const baseFor = (who: Caller) => (who === 'plain' ? server.url : (server.tlsUrl as string));
const clientFor = (who: Caller) => new WsagClient(baseFor(who), fetcherFor(who));

/** An HTTP call's outcome by its status; the body is kept for the listing checks. */
function http(
  method: string,
  target: (f: Fixtures) => string | Promise<string>,
  init: { body?: (f: Fixtures) => string; type?: string; stream?: true } = {},
) {
  return async (who: Caller, f: Fixtures): Promise<Outcome> => {
    const url = baseFor(who) + (await target(f));
    const controller = new AbortController();
    const headers: Record<string, string> = { 'x-requested-with': 'matrix' };
    if (init.type) headers['content-type'] = init.type;
    if (init.type === 'application/octet-stream')
      headers['x-checkpoint-sha256'] = createHash('sha256')
        .update(init.body?.(f) ?? '')
        .digest('hex');
    // A stream that stays open was let in: the TLS client reads whole bodies, so it is cut off.
    const open = init.stream && setTimeout(() => controller.abort(), 1500);
    const response = await fetcherFor(who)(url, {
      method,
      headers,
      signal: controller.signal,
      redirect: 'manual',
      ...(init.body ? { body: init.body(f) } : {}),
    })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return undefined;
        throw error;
      })
      .finally(() => open && clearTimeout(open));
    if (!response) return 'allowed';
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      controller.abort();
      return outcomeOf(response.status);
    }
    const text = await response.text();
    seen.set(`${method} ${url} ${who}`, text);
    const fault = response.headers.get('content-type')?.startsWith('application/problem+json')
      ? (JSON.parse(text) as { error: string }).error
      : undefined;
    return fault && pastAuthorisation.has(fault) ? 'allowed' : outcomeOf(response.status);
  };
}
const outcomeOf = (status: number): Outcome =>
  status === 401
    ? 'unauthenticated'
    : status === 403
      ? 'refused'
      : status < 400 || status === 409
        ? 'allowed'
        : `HTTP ${status}`;
/** Faults that say the caller was let in, and the object's state stood in the way. */
const pastAuthorisation = new Set(['InvalidStateTransition', 'NegotiationClosed', 'SignatureInvalid']);

/** A SOAP operation's outcome by its fault. */
function soap(run: (client: WsagClient, f: Fixtures) => Promise<unknown>) {
  return async (who: Caller, f: Fixtures): Promise<Outcome> => {
    const error = await run(clientFor(who), f).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (error === undefined) return 'allowed';
    if (!(error instanceof WsagFault)) throw error;
    return error.code === 'NotAuthenticated'
      ? 'unauthenticated'
      : error.code === 'NotAuthorized'
        ? 'refused'
        : pastAuthorisation.has(error.code)
          ? 'allowed'
          : `${error.code}: ${error.message}`;
  };
}
const rp = (qname: string) =>
  `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}" xmlns:wsag-neg="${ns.wsagNeg}">${qname}</rp:GetResourceProperty>`;
const rpDocument = `<rp:GetResourcePropertyDocument xmlns:rp="${ns.wsrfRp}"/>`;
const rpw = 'http://docs.oasis-open.org/wsrf/rpw-2';
const property = (
  port: string,
  id?: (f: Fixtures) => { parameter: 'AgreementId' | 'NegotiationId'; id: string },
  qname = 'wsag:Template',
) =>
  soap((c, f) =>
    c.call(`${c.baseUrl}/wsag/${port}`, `${rpw}/GetResourceProperty/GetResourcePropertyRequest`, rp(qname), id?.(f)),
  );
const propertyDocument = (
  port: string,
  id?: (f: Fixtures) => { parameter: 'AgreementId' | 'NegotiationId'; id: string },
) =>
  soap((c, f) =>
    c.call(
      `${c.baseUrl}/wsag/${port}`,
      `${rpw}/GetResourcePropertyDocument/GetResourcePropertyDocumentRequest`,
      rpDocument,
      id?.(f),
    ),
  );
const agreementRef = (f: Fixtures) => ({ parameter: 'AgreementId' as const, id: f.agreement });
const negotiationRef = (f: Fixtures) => ({ parameter: 'NegotiationId' as const, id: f.negotiation });
/** One node for an hour, each offer an hour after the one before: the cluster never fills. */
let offers = 0;
const offer = async (c: WsagClient) => {
  const start = Date.now() + (3 + offers++) * 3600_000;
  return reservationOffer(c, 1, new Date(start), new Date(start + 3600_000));
};
/** The same reservations as `offer`, over JSON: a template and its items. */
const jsonReservation = () => {
  const start = Date.now() + (3 + offers++) * 3600_000;
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    template: 'advance-reservation',
    items: { NodeCount: 1, StartTime: iso(start), EndTime: iso(start + 3600_000) },
  };
};
const decide = (name: 'Accept' | 'Reject') =>
  soap(async (c, f) =>
    c.call(
      `${c.baseUrl}/wsag/AgreementAcceptance`,
      `${ns.wsag}/AgreementAcceptance/${name}Request`,
      `<wsag:${name}AgreementInput xmlns:wsag="${ns.wsag}"/>`,
      await f.pending(),
    ),
  );
const wsdl = (port: string): Row => ({ rule: 'public', call: http('GET', () => `/wsag/${port}?wsdl`) });

const ports = [
  'AgreementFactory',
  'PendingAgreementFactory',
  'AgreementAcceptance',
  'Agreement',
  'AgreementState',
  'NegotiationFactory',
  'Negotiation',
];
const table: Record<string, Row> = {
  'GET /healthz': { rule: 'public', call: http('GET', () => '/healthz') },
  'GET /': { rule: 'public', call: http('GET', () => '/') },
  'GET /schemas/:file': { rule: 'public', call: http('GET', () => '/schemas/sla-terms.xsd') },
  ...Object.fromEntries(
    ports.flatMap((port) => [
      [`GET /wsag/${port}`, wsdl(port)],
      [`POST /wsag/${port}`, { rule: 'soap' }],
    ]),
  ),
  'GET /metrics': { rule: 'party', call: http('GET', () => '/metrics') },
  'GET /api/events': { rule: 'party', call: http('GET', () => '/api/events', { stream: true }) },
  'GET /api/vo': { rule: 'operator', call: http('GET', () => '/api/vo') },
  'GET /api/fair-use': { rule: 'party', call: http('GET', () => '/api/fair-use') },
  'GET /api/prices': { rule: 'party', call: http('GET', () => '/api/prices?nodes=1&hours=1') },
  'GET /api/agreements': { rule: 'party', call: http('GET', () => '/api/agreements'), hides: (f) => f.agreement },
  'GET /api/agreements/:id': { rule: 'owner', call: http('GET', (f) => `/api/agreements/${f.agreement}`) },
  'GET /api/agreements/:id/document': {
    rule: 'owner',
    call: http('GET', (f) => `/api/agreements/${f.agreement}/document`),
  },
  'GET /api/agreements/:id/report': { rule: 'owner', call: http('GET', (f) => `/api/agreements/${f.usage}/report`) },
  'GET /api/agreements/:id/subscriptions': {
    rule: 'owner',
    call: http('GET', (f) => `/api/agreements/${f.agreement}/subscriptions`),
  },
  'POST /api/agreements/:id/subscriptions': {
    rule: 'owner',
    call: http('POST', (f) => `/api/agreements/${f.agreement}/subscriptions`, {
      type: 'application/json',
      body: () => JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    }),
  },
  'DELETE /api/agreements/:id/subscriptions/:subscription': {
    rule: 'owner',
    call: http('DELETE', async (f) => `/api/agreements/${f.agreement}/subscriptions/${await f.subscription()}`),
  },
  'PUT /api/agreements/:id/checkpoint': {
    rule: 'owner',
    call: http('PUT', (f) => `/api/agreements/${f.migrating}/checkpoint`, {
      type: 'application/octet-stream',
      body: () => 'a checkpoint',
    }),
  },
  'PUT /api/agreements/:id/countersignature': {
    rule: 'initiator',
    call: http('PUT', (f) => `/api/agreements/${f.agreement}/countersignature`, {
      type: 'application/xml',
      body: () => '<wsag:Agreement xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement"/>',
    }),
  },
  'POST /api/agreements/:id/accept': {
    rule: 'operator',
    call: http('POST', async (f) => `/api/agreements/${await f.pending()}/accept`),
  },
  'POST /api/agreements/:id/reject': {
    rule: 'operator',
    call: http('POST', async (f) => `/api/agreements/${await f.pending()}/reject`),
  },
  'POST /api/agreements/:id/corrections': {
    rule: 'operator',
    call: http('POST', (f) => `/api/agreements/${f.agreement}/corrections`, {
      type: 'application/json',
      body: () => JSON.stringify({ term: 'NodesThroughWindow', reason: 'matrix' }),
    }),
  },
  'GET /api/negotiations': { rule: 'party', call: http('GET', () => '/api/negotiations'), hides: (f) => f.negotiation },
  'GET /api/openapi.json': { rule: 'public', call: http('GET', () => '/api/openapi.json') },
  'GET /api/templates': { rule: 'party', call: http('GET', () => '/api/templates') },
  'GET /api/templates/:id': { rule: 'party', call: http('GET', () => '/api/templates/deadline-job') },
  'GET /api/templates/:id/document': { rule: 'party', call: http('GET', () => '/api/templates/deadline-job/document') },
  'POST /api/agreements': {
    rule: 'party',
    call: http('POST', () => '/api/agreements', {
      body: () => JSON.stringify(jsonReservation()),
      type: 'application/json',
    }),
  },
  'POST /api/agreements/:id/terminate': {
    rule: 'owner',
    call: http('POST', async (f) => `/api/agreements/${await f.fresh()}/terminate`),
  },
  'POST /api/negotiations': {
    rule: 'party',
    call: http('POST', () => '/api/negotiations', { body: () => '{}', type: 'application/json' }),
  },
  'POST /api/negotiations/:id/offers': {
    rule: 'owner',
    call: http('POST', (f) => `/api/negotiations/${f.negotiation}/offers`, {
      body: () => JSON.stringify({ offers: [{ ...jsonReservation(), state: 'Advisory' }] }),
      type: 'application/json',
    }),
  },
  'POST /api/negotiations/:id/advertisements': {
    rule: 'owner',
    call: http('POST', (f) => `/api/negotiations/${f.negotiation}/advertisements`, {
      body: () => JSON.stringify({ offers: [jsonReservation()] }),
      type: 'application/json',
    }),
  },
  'POST /api/negotiations/:id/offers/:offer/accept': {
    rule: 'owner',
    call: http('POST', async (f) => {
      const { negotiation, offer } = await f.acceptable();
      return `/api/negotiations/${negotiation}/offers/${offer}/accept`;
    }),
  },
  'POST /api/negotiations/:id/terminate': {
    rule: 'owner',
    call: http('POST', async (f) => `/api/negotiations/${(await f.acceptable()).negotiation}/terminate`),
  },
  'GET /api/negotiations/:id': { rule: 'owner', call: http('GET', (f) => `/api/negotiations/${f.negotiation}`) },
  // Another party's bookings are busy time: nodes and times, no id.
  'GET /api/plan': { rule: 'party', call: http('GET', () => '/api/plan'), hides: (f) => f.agreement },
  'GET /api/nodes': { rule: 'party', call: http('GET', () => '/api/nodes') },
  'GET /api/cluster': { rule: 'party', call: http('GET', () => '/api/cluster') },
  'POST /api/nodes/:id/fail': { rule: 'operator', call: http('POST', () => '/api/nodes/n016/fail') },
  'POST /api/nodes/:id/repair': { rule: 'operator', call: http('POST', () => '/api/nodes/n016/repair') },
  'GET /api/accounts': { rule: 'party', call: http('GET', () => '/api/accounts'), hides: (f) => f.account },
  'POST /api/accounts': {
    rule: 'operator',
    call: http('POST', () => '/api/accounts', {
      type: 'application/json',
      body: () => JSON.stringify({ id: `acc-${Math.random()}`, owner: 'someone', currency: 'EUR' }),
    }),
  },
  'GET /api/accounts/:id': { rule: 'owner', call: http('GET', (f) => `/api/accounts/${f.account}`) },
  'GET /api/accounts/:id/statement': {
    rule: 'owner',
    call: http('GET', (f) => `/api/accounts/${f.account}/statement`),
  },
  'POST /api/accounts/:id/deposits': {
    rule: 'operator',
    call: http('POST', (f) => `/api/accounts/${f.account}/deposits`, {
      type: 'application/json',
      body: () => JSON.stringify({ amount: 1 }),
    }),
  },
  'POST /api/accounts/:id/allocations': {
    rule: 'operator',
    call: http('POST', (f) => `/api/accounts/${f.account}/allocations`, {
      type: 'application/json',
      body: () => JSON.stringify({ amount: 1 }),
    }),
  },
  'GET /api/usage': { rule: 'party', call: http('GET', () => '/api/usage'), hides: (f) => f.usage },
  'GET /api/usage/:id': { rule: 'owner', call: http('GET', (f) => `/api/usage/${f.usage}`) },
  'SOAP /wsag/AgreementFactory CreateAgreement': {
    rule: 'party',
    call: soap(async (c) => c.createAgreement(await offer(c))),
  },
  'SOAP /wsag/AgreementFactory GetResourceProperty': { rule: 'party', call: property('AgreementFactory') },
  'SOAP /wsag/AgreementFactory GetResourcePropertyDocument': {
    rule: 'party',
    call: propertyDocument('AgreementFactory'),
  },
  'SOAP /wsag/PendingAgreementFactory CreatePendingAgreement': {
    rule: 'party',
    call: soap(async (c) => c.createPendingAgreement(await offer(c))),
  },
  'SOAP /wsag/PendingAgreementFactory GetResourceProperty': {
    rule: 'party',
    call: property('PendingAgreementFactory'),
  },
  'SOAP /wsag/PendingAgreementFactory GetResourcePropertyDocument': {
    rule: 'party',
    call: propertyDocument('PendingAgreementFactory'),
  },
  'SOAP /wsag/AgreementAcceptance Accept': { rule: 'operator', call: decide('Accept') },
  'SOAP /wsag/AgreementAcceptance Reject': { rule: 'operator', call: decide('Reject') },
  'SOAP /wsag/Agreement Terminate': { rule: 'owner', call: soap(async (c, f) => c.terminate(await f.fresh())) },
  'SOAP /wsag/Agreement GetResourceProperty': {
    rule: 'owner',
    call: property('Agreement', agreementRef, 'wsag:AgreementId'),
  },
  'SOAP /wsag/Agreement GetResourcePropertyDocument': {
    rule: 'owner',
    call: propertyDocument('Agreement', agreementRef),
  },
  'SOAP /wsag/AgreementState GetResourceProperty': {
    rule: 'owner',
    call: property('AgreementState', agreementRef, 'wsag:AgreementState'),
  },
  'SOAP /wsag/AgreementState GetResourcePropertyDocument': {
    rule: 'owner',
    call: propertyDocument('AgreementState', agreementRef),
  },
  'SOAP /wsag/NegotiationFactory InitiateNegotiation': { rule: 'party', call: soap((c) => c.initiateNegotiation()) },
  'SOAP /wsag/Negotiation Negotiate': {
    rule: 'owner',
    call: soap(async (c, f) =>
      c.negotiate(f.negotiation, [
        negotiationOffer(await offer(c), { counterOfferTo: 'advance-reservation-v1', state: 'Advisory' }),
      ]),
    ),
  },
  'SOAP /wsag/Negotiation Advertise': {
    rule: 'owner',
    call: soap(async (c, f) =>
      c.advertise(f.negotiation, [
        negotiationOffer(await offer(c), { counterOfferTo: 'advance-reservation-v1', state: 'Advisory' }),
      ]),
    ),
  },
  'SOAP /wsag/Negotiation Terminate': {
    rule: 'owner',
    call: soap(async (c) =>
      c.terminateNegotiation(
        await clientFor('owner')
          .initiateNegotiation()
          .then((n) => n.negotiationId),
      ),
    ),
  },
  'SOAP /wsag/Negotiation GetResourceProperty': {
    rule: 'owner',
    call: property('Negotiation', negotiationRef, 'wsag-neg:NegotiationContext'),
  },
  'SOAP /wsag/Negotiation GetResourcePropertyDocument': {
    rule: 'owner',
    call: propertyDocument('Negotiation', negotiationRef),
  },
};

/** What each kind of caller gets under each rule. */
function expected(rule: Rule, who: Caller): Outcome {
  if (rule === 'public') return 'allowed';
  if (who === 'plain' || who === 'no certificate' || who === 'untrusted CA' || who === 'expired')
    return 'unauthenticated';
  if (rule === 'party') return 'allowed';
  if (rule === 'owner') return who === 'other' ? 'refused' : 'allowed';
  if (rule === 'initiator') return who === 'owner' ? 'allowed' : 'refused';
  return who === 'operator' ? 'allowed' : 'refused';
}

let fixtures: Fixtures;
beforeAll(async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-matrix-'));
  pki = path.join(dataDir, 'pki');
  await createDemoPki({ dir: pki, keyType: 'ec' });
  const foreign = path.join(dataDir, 'foreign');
  await createDemoPki({ dir: foreign, keyType: 'ec' });
  const caCredential = loadCredential(path.join(pki, 'ca.pem'), path.join(pki, 'ca.key'));
  const issue = async (cn: string, now = new Date(), days = 30): Promise<Credential> => {
    const issued = await issueEndEntity({
      ca: caCredential,
      subject: nameFromParts([
        ['C', 'DE'],
        ['O', 'wsag-demo'],
        ['OU', 'users'],
        ['CN', cn],
      ]),
      keyType: 'ec',
      days,
      now,
      purpose: 'client',
    });
    return { ...issued, chain: [] };
  };
  credentials.set('owner', loadCredential(path.join(pki, 'alice.pem'), path.join(pki, 'alice.key')));
  credentials.set('other', loadCredential(path.join(pki, 'bob.pem'), path.join(pki, 'bob.key')));
  credentials.set('operator', await issue('operator'));
  credentials.set('untrusted CA', loadCredential(path.join(foreign, 'alice.pem'), path.join(foreign, 'alice.key')));
  credentials.set('expired', await issue('carol', new Date(Date.now() - 3 * 86_400_000), 1));
  server = await startTestServer({
    config: {
      // Alice books the same hours many times over: fair use has its own test (fair-use.test.ts).
      dataDir,
      tlsPort: 0,
      anonymous: 'deny',
      clusterNodes: 16,
      fairUse: 'off',
      admins: ['/C=DE/O=wsag-demo/OU=users/CN=operator'],
      caFile: path.join(pki, 'ca.pem'),
      tlsCertFile: path.join(pki, 'server.pem'),
      tlsKeyFile: path.join(pki, 'server.key'),
    },
  });
  const alice = clientFor('owner');
  const operator = fetcherFor('operator');
  const json = async (url: string, body: unknown) =>
    (await (
      await operator(server.tlsUrl + url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as { id: string };
  const account = (
    await json('/api/accounts', { id: 'alice-account', owner: '/C=DE/O=wsag-demo/OU=users/CN=alice', currency: 'EUR' })
  ).id;
  const ended = (await alice.createAgreement(await offer(alice))).agreementId;
  await alice.terminate(ended);
  await server.accounting.idle();
  fixtures = {
    agreement: (await alice.createAgreement(await offer(alice))).agreementId,
    migrating: (
      await alice.createAgreement(
        await deadlineOffer(alice, {
          level: 'Standard',
          deadline: new Date(Date.now() + 8 * 3600_000),
          nodes: 1,
          resumesFromCheckpointBytes: 1024,
        }),
      )
    ).agreementId,
    negotiation: (await alice.initiateNegotiation()).negotiationId,
    account,
    usage: ended,
    subscription: async () => {
      const answer = await fetcherFor('owner')(`${server.tlsUrl}/api/agreements/${fixtures.agreement}/subscriptions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
      });
      return ((await answer.json()) as { id: string }).id;
    },
    pending: async () => (await alice.createPendingAgreement(await offer(alice))).agreementId,
    fresh: async () => (await alice.createAgreement(await offer(alice))).agreementId,
    acceptable: async () => {
      const { negotiationId } = await alice.initiateNegotiation();
      const answers = await alice.negotiate(negotiationId, [
        negotiationOffer(await offer(alice), { counterOfferTo: 'advance-reservation-v1', state: 'Solicited' }),
      ]);
      const found = answers.find((a) => a.state === 'Acceptable');
      if (!found?.offerId) throw new Error('the fixture negotiation got no Acceptable counter-offer');
      return { negotiation: negotiationId, offer: found.offerId };
    },
  };
}, 120_000);
afterAll(async () => server?.close());

describe('the authorisation matrix', () => {
  it('has a rule for every route and SOAP operation the server answers, and no rule for one it does not', () => {
    const served = server.routes().map((r) => `${r.method} ${r.path}`);
    expect(
      served.filter((route) => !(route in table)),
      'routes without a rule',
    ).toEqual([]);
    expect(
      Object.keys(table).filter((route) => !served.includes(route)),
      'rules for routes not served',
    ).toEqual([]);
  });

  for (const [route, row] of Object.entries(table)) {
    if (!row.call) continue;
    it(`${route}: ${row.rule}`, async () => {
      const outcomes: Record<string, Outcome> = {};
      for (const who of callers) outcomes[who] = await (row.call as NonNullable<Row['call']>)(who, fixtures);
      expect(outcomes, JSON.stringify(outcomes)).toEqual(
        Object.fromEntries(callers.map((who) => [who, expected(row.rule, who)])),
      );
      if (row.hides) {
        const listed = (who: Caller) => seen.get(`GET ${server.tlsUrl}${route.split(' ')[1]} ${who}`);
        expect(listed('owner')).toContain(row.hides(fixtures));
        expect(listed('other')).toBeDefined();
        expect(listed('other')).not.toContain(row.hides(fixtures));
      }
    });
  }
});
