import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, stopTestServer, type TestServer } from '../support/server.js';

/**
 * The agreement lifecycle over JSON: templates, create (from item values or a document), negotiation (Advisory,
 * Solicited, accept, renegotiate), terminate; the SOAP face sees the same agreements and negotiations.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 4, executor: 'none' } });
});
afterAll(() => stopTestServer(server));

// biome-ignore lint/suspicious/noExplicitAny: the answers' JSON, read field by field below
type Body = Record<string, any>;

const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.url}${route}`, {
    method,
    ...(body !== undefined
      ? {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': 'application/json', ...headers },
        }
      : // A request without a body that changes something says so (the cross-site guard, docs/security.md).
        { headers: { 'x-requested-with': 'test', ...headers } }),
  });
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    type,
    body: (response.status === 204
      ? {}
      : type.includes('json')
        ? await response.json()
        : await response.text()) as Body,
  };
};

describe('templates over JSON', () => {
  it('lists each template with the Items a value sets and the values each takes; one by Name or id; its document', async () => {
    const list = await call('GET', '/api/templates');
    expect(list.status).toBe(200);
    const deadline = list.body.templates.find((t: { name: string }) => t.name === 'deadline-job');
    expect(deadline.items.find((i: { name: string }) => i.name === 'NodeCount')).toMatchObject({
      settable: true,
      takes: expect.stringMatching(/^a whole number from 1 to \d+$/),
    });
    expect(deadline.items.find((i: { name: string }) => i.name === 'NodeCountForm')).toMatchObject({ settable: false });
    const byName = await call('GET', '/api/templates/deadline-job');
    const byId = await call('GET', deadline.links.self);
    expect(byName.body).toEqual(deadline);
    expect(byId.body).toEqual(deadline);
    const document = await call('GET', deadline.links.document);
    expect(document.type).toMatch(/^application\/xml/);
    expect(document.body).toContain('<wsag:Template');
    const unknown = await call('GET', '/api/templates/deadline-jbo');
    expect(unknown).toMatchObject({
      status: 404,
      type: expect.stringMatching(/^application\/problem\+json/),
      body: { title: 'UnknownResource', detail: expect.stringContaining('did you mean "deadline-job"?') },
    });
  });
});

describe('agreements over JSON', () => {
  it('creates one from a template and item values, as SOAP would; reads it both ways; terminates it', async () => {
    const created = await call('POST', '/api/agreements', {
      template: 'deadline-job',
      items: { NodeCount: 2, GuaranteeLevel: 'Standard' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      state: 'Observed',
      template: 'deadline-job',
      nodes: 2,
      links: { self: `/api/agreements/${id}`, document: `/api/agreements/${id}/document` },
    });
    expect(created.body.links.epr).toBe(`${server.url}/wsag/Agreement`);
    // The SOAP face sees the same agreement.
    const client = new WsagClient(server.url);
    expect(await client.state(id)).toMatchObject({ state: 'Observed' });
    const document = await call('GET', created.body.links.document);
    expect(document.body).toContain('<wsag:Agreement');
    expect(document.body).toContain('>2</jsdl:Exact>');

    const terminated = await call('POST', `/api/agreements/${id}/terminate`);
    expect(terminated).toMatchObject({ status: 200, body: { id, state: 'Terminated' } });
    expect(await client.state(id)).toMatchObject({ state: 'Terminated' });
    const again = await call('POST', `/api/agreements/${id}/terminate`);
    expect(again).toMatchObject({ status: 409, body: { title: 'InvalidStateTransition' } });
  });

  it('creates one from a whole offer document, and a pending one', async () => {
    const template = (await new WsagClient(server.url).templates()).find((t) => t.includes('deadline-job')) as string;
    const offer = offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]);
    const created = await call('POST', '/api/agreements', { offer: `<?xml version="1.0"?>\n${offer}` });
    expect(created).toMatchObject({ status: 201, body: { state: 'Observed', nodes: 1 } });
    const pending = await call('POST', '/api/agreements', { template: 'deadline-job', pending: true });
    expect(pending).toMatchObject({ status: 201, body: { state: 'Pending' } });
  });

  it('refuses by name what it cannot take, and keeps serving', async () => {
    const refusals: Array<[unknown, number, string, RegExp]> = [
      ['{"template": ', 400, 'MalformedMessage', /send a JSON object/],
      [{ template: 'deadline-job', nodes: 2 }, 400, 'SchemaViolation', /has a field "nodes" it does not take/],
      [{ template: 7 }, 400, 'SchemaViolation', /template must be string/],
      [{}, 400, 'MalformedMessage', /give "template"/],
      [{ template: 'deadline-job', offer: '<x/>' }, 400, 'MalformedMessage', /not both/],
      [{ template: 'deadline-jb' }, 400, 'UnknownTemplate', /did you mean "deadline-job"\?/],
      [
        { template: 'deadline-job', items: { NodeCount: 'two' } },
        400,
        'CreationConstraintViolation',
        /^item NodeCount must be a whole number/,
      ],
      [
        { template: 'deadline-job', items: { NodeCont: 2 } },
        400,
        'CreationConstraintViolation',
        /has no Item "NodeCont" to set; did you mean "NodeCount"\?/,
      ],
      [{ offer: '<wsag:AgreementOffer' }, 400, 'MalformedMessage', /offer/],
      [{ offer: '<Offer xmlns="urn:x"/>' }, 400, 'SchemaViolation', /./],
      [{ template: 'deadline-job', items: { NodeCount: 64 } }, 409, 'CannotSatisfy', /./],
    ];
    for (const [body, status, fault, detail] of refusals) {
      const answer = await call('POST', '/api/agreements', body);
      expect([answer.status, answer.body.title], JSON.stringify(body)).toEqual([status, fault]);
      expect(answer.body.detail, JSON.stringify(body)).toMatch(detail);
      expect(answer.body.detail).not.toMatch(/ at .*\.(ts|js):\d+/);
    }
    expect((await call('GET', '/healthz')).status).toBe(200);
  });
});

describe('GET /api/openapi.json', () => {
  it('serves the document, public', async () => {
    const answer = await call('GET', '/api/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ openapi: '3.1.0', info: { title: 'wsag-server JSON API' } });
    expect(answer.body.paths['/api/agreements'].post.operationId).toBe('createAgreement');
  });
});

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const hour = 3600_000;

describe('negotiation over JSON', () => {
  it('Advisory, then Solicited: counter-offers with price, hold and expiry; accepting one makes the agreement', async () => {
    const opened = await call('POST', '/api/negotiations', {});
    expect(opened).toMatchObject({ status: 201, body: { state: 'Open', type: 'Negotiation' } });
    const id = opened.body.id as string;
    // After every deadline job the other tests book (their deadlines are at most 6 hours ahead).
    const start = Math.ceil(Date.now() / hour) * hour + 8 * hour;
    const items = { NodeCount: 2, StartTime: iso(start), EndTime: iso(start + hour) };
    const advisory = await call('POST', `/api/negotiations/${id}/offers`, {
      offers: [{ template: 'advance-reservation', items, state: 'Advisory' }],
    });
    expect(advisory.status).toBe(200);
    expect(advisory.body.counterOffers.length).toBeGreaterThan(0);
    expect(advisory.body.counterOffers[0]).toMatchObject({ creator: 'NegotiationResponder', state: 'Advisory' });
    expect(advisory.body.counterOffers[0].hold).toBeUndefined();

    const solicited = await call('POST', `/api/negotiations/${id}/offers`, {
      offers: [{ template: 'advance-reservation', items, state: 'Solicited' }],
    });
    const acceptable = solicited.body.counterOffers.find((o: Body) => o.state === 'Acceptable');
    expect(acceptable).toMatchObject({
      price: { amount: expect.any(Number), currency: expect.any(String) },
      hold: { nodes: 2, state: expect.any(String), expiresAt: expect.any(String) },
      expirationTime: expect.any(String),
      document: expect.stringContaining('NegotiationCounterOffer'),
    });
    // The SOAP face sees the same offers.
    const soap = await new WsagClient(server.url).negotiationOffers(id);
    expect(soap.map((o) => o.offerId)).toContain(acceptable.offerId);

    const acceptRoute = `/api/negotiations/${id}/offers/${acceptable.offerId}/accept`;
    const accepted = await call('POST', acceptRoute, undefined, { 'idempotency-key': 'accept-1' });
    // Sent again (the answer was lost): the same agreement, not NegotiationClosed.
    expect(await call('POST', acceptRoute, undefined, { 'idempotency-key': 'accept-1' })).toEqual(accepted);
    expect(accepted).toMatchObject({ status: 201, body: { state: 'Observed', nodes: 2 } });
    expect(await new WsagClient(server.url).state(accepted.body.id)).toMatchObject({ state: 'Observed' });
    const after = await call('GET', `/api/negotiations/${id}`);
    expect(after.body.agreementCreated).toBe(accepted.body.id);

    // Renegotiation: the window extended by an hour.
    const re = await call('POST', '/api/negotiations', { agreement: accepted.body.id });
    expect(re).toMatchObject({ status: 201, body: { type: 'Renegotiation', agreementId: accepted.body.id } });
    const answers = await call('POST', `/api/negotiations/${re.body.id}/offers`, {
      offers: [{ change: { until: iso(start + 2 * hour) }, state: 'Solicited' }],
    });
    const longer = answers.body.counterOffers.find((o: Body) => o.state === 'Acceptable');
    expect(longer).toBeDefined();
    const changed = await call('POST', `/api/negotiations/${re.body.id}/offers/${longer.offerId}/accept`);
    expect(changed).toMatchObject({ status: 201, body: { id: accepted.body.id } });
    expect(Date.parse(changed.body.end) - Date.parse(accepted.body.end)).toBe(hour);

    // And shrunk to one node.
    const shrink = await call('POST', '/api/negotiations', { agreement: accepted.body.id });
    const fewer = await call('POST', `/api/negotiations/${shrink.body.id}/offers`, {
      offers: [{ change: { nodes: 1 }, state: 'Solicited' }],
    });
    const one = fewer.body.counterOffers.find((o: Body) => o.state === 'Acceptable');
    const shrunk = await call('POST', `/api/negotiations/${shrink.body.id}/offers/${one.offerId}/accept`);
    expect(shrunk).toMatchObject({ status: 201, body: { id: accepted.body.id, nodes: 1 } });
  });

  it('advertises and terminates; refuses by name what it cannot take', async () => {
    const { body: negotiation } = await call('POST', '/api/negotiations', {});
    const id = negotiation.id as string;
    expect(
      (await call('POST', `/api/negotiations/${id}/advertisements`, { offers: [{ template: 'deadline-job' }] })).status,
    ).toBe(204);
    const refusals: Array<[string, unknown, string, RegExp]> = [
      [`/api/negotiations/${id}/offers`, { offers: [] }, 'SchemaViolation', /offers must NOT have fewer than 1 items/],
      [
        `/api/negotiations/${id}/offers`,
        { offers: [{ template: 'deadline-job', state: 'Acceptable' }] },
        'SchemaViolation',
        /state must be equal to one of the allowed values/,
      ],
      [
        `/api/negotiations/${id}/offers`,
        { offers: [{ change: { nodes: 1 } }] },
        'InvalidTerms',
        /renegotiation of an agreement only/,
      ],
      [`/api/negotiations/${id}/offers`, { offers: [{ offer: '<x/>' }] }, 'MalformedMessage', /counterOfferTo/],
      [`/api/negotiations/${id}/offers/nope/accept`, undefined, 'UnknownResource', /has no offer "nope"/],
      ['/api/negotiations', { agreement: 'no-such-agreement' }, 'UnknownResource', /./],
      [
        '/api/negotiations',
        { expirationTime: 'soon' },
        'SchemaViolation',
        /expirationTime must match format "date-time"/,
      ],
    ];
    for (const [route, body, fault, detail] of refusals) {
      const answer = await call('POST', route, body);
      expect(answer.body.title, `${route} ${JSON.stringify(body)}: ${answer.body.detail}`).toBe(fault);
      expect(answer.body.detail).toMatch(detail);
    }
    const ended = await call('POST', `/api/negotiations/${id}/terminate`);
    expect(ended).toMatchObject({ status: 200, body: { state: 'Terminated' } });
    const late = await call('POST', `/api/negotiations/${id}/offers`, { offers: [{ template: 'deadline-job' }] });
    expect(late.body.title).toBe('NegotiationClosed');
  });
});
