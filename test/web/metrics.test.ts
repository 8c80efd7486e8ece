import parse from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * /metrics in Prometheus' text format, read by a parser nobody here wrote
 * (parse-prometheus-text-format): the counters and gauges move as requests are made.
 */
let server: TestServer;
let client: WsagClient;
beforeAll(async () => {
  server = await startTestServer({ config: { clusterNodes: 8, admins: ['anonymous'] } });
  client = new WsagClient(server.url);
});
afterAll(async () => server?.close());

let text = '';
async function scrape(): Promise<ReturnType<typeof parse>> {
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  text = await response.text();
  return parse(text);
}

/** A histogram's count for a series, from the text (the parser folds a histogram's series into its buckets). */
const histogramCount = (name: string, labels: string) =>
  Number(new RegExp(`^${name}_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

/** The value of `name` with exactly these labels (0 when the series does not exist yet). */
function value(families: ReturnType<typeof parse>, name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find(
    (m) => JSON.stringify(Object.entries(m.labels ?? {}).sort()) === JSON.stringify(Object.entries(labels).sort()),
  );
  return Number(sample?.value ?? sample?.count ?? 0);
}

describe('GET /metrics', () => {
  it('counts requests by operation and outcome, agreements by state and their changes, with latency histograms', async () => {
    const before = await scrape();
    const startWaitsBefore = histogramCount('wsag_soap_request_start_wait_seconds', 'port="AgreementFactory"');
    const readsBefore = histogramCount('wsag_document_work_seconds', 'work="read-offer",on="event-loop"');
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }]),
    );
    await client
      .createAgreement(offerFromTemplate(template, [{ location: 'NodeCount', value: '64' }]))
      .catch(() => undefined); // 64 nodes on 8: CannotSatisfy
    const after = await scrape();
    const create = { port: 'AgreementFactory', operation: 'CreateAgreement' };
    expect(
      value(after, 'wsag_soap_requests_total', { ...create, outcome: 'ok' }) -
        value(before, 'wsag_soap_requests_total', { ...create, outcome: 'ok' }),
    ).toBe(1);
    expect(
      value(after, 'wsag_soap_requests_total', { ...create, outcome: 'CannotSatisfy' }) -
        value(before, 'wsag_soap_requests_total', { ...create, outcome: 'CannotSatisfy' }),
    ).toBe(1);
    const histogram = after.find((f) => f.name === 'wsag_soap_request_duration_seconds');
    expect(histogram?.type).toBe('HISTOGRAM');
    expect(
      histogramCount('wsag_soap_request_duration_seconds', 'port="AgreementFactory",operation="CreateAgreement"'),
    ).toBeGreaterThanOrEqual(2);
    expect(
      value(after, 'wsag_agreements', { state: 'Observed' }) - value(before, 'wsag_agreements', { state: 'Observed' }),
    ).toBe(1);
    expect(
      value(after, 'wsag_agreement_transitions_total', { from: 'none', to: 'Observed' }) -
        value(before, 'wsag_agreement_transitions_total', { from: 'none', to: 'Observed' }),
    ).toBe(1);
    expect(histogramCount('wsag_store_write_seconds', 'operation="insert"')).toBeGreaterThanOrEqual(1);
    // Where a request's time went: its wait to start, and reading its offer (alone, on the event loop).
    // Every request the port answered waited to start (the templates' read and the two creates).
    const answered = (families: ReturnType<typeof parse>) =>
      (families.find((f) => f.name === 'wsag_soap_requests_total')?.metrics ?? [])
        .filter((m) => m.labels?.port === 'AgreementFactory')
        .reduce((sum, m) => sum + Number(m.value), 0);
    expect(histogramCount('wsag_soap_request_start_wait_seconds', 'port="AgreementFactory"') - startWaitsBefore).toBe(
      answered(after) - answered(before),
    );
    expect(answered(after) - answered(before)).toBeGreaterThanOrEqual(2);
    expect(histogramCount('wsag_document_work_seconds', 'work="read-offer",on="event-loop"') - readsBefore).toBe(2);
    expect(value(after, 'wsag_plan_load', { period: 'next_hour' })).toBeGreaterThanOrEqual(0);

    await client.terminate(agreementId);
    const ended = await scrape();
    expect(
      value(ended, 'wsag_agreement_transitions_total', { from: 'Observed', to: 'Terminated' }) -
        value(after, 'wsag_agreement_transitions_total', { from: 'Observed', to: 'Terminated' }),
    ).toBe(1);
  });

  it('shows open holds and re-plans, and the process', async () => {
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const { negotiationId } = await client.initiateNegotiation();
    await client.negotiate(negotiationId, [
      negotiationOffer(offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }]), {
        counterOfferTo: 'advance-reservation-v1',
        state: 'Solicited',
      }),
    ]);
    const held = await scrape();
    expect(value(held, 'wsag_holds_open')).toBe(1);
    const failed = await fetch(`${server.url}/api/nodes/n001/fail`, {
      method: 'POST',
      headers: { 'x-requested-with': 'test' },
    });
    expect(failed.status).toBe(200);
    const replanned = await scrape();
    expect(
      value(replanned, 'wsag_replans_total', { cause: 'node-failed' }) -
        value(held, 'wsag_replans_total', { cause: 'node-failed' }),
    ).toBe(1);
    expect(value(replanned, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(replanned.find((f) => f.name === 'nodejs_eventloop_lag_seconds')).toBeDefined();
    await client.terminateNegotiation(negotiationId);
    expect(value(await scrape(), 'wsag_holds_open')).toBe(0);
  });
});
