import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GuaranteeLevel } from '../../src/domain/terms.js';
import type { StoredReport } from '../../src/engine/execution/ports.js';
import {
  at,
  deadlineOffer,
  getJson,
  planOf,
  postJson,
  reservationOffer,
  secondsOf,
  simulatedServer,
  type SimulatedServer,
} from './run-time-support.js';

/**
 * Acceptance, through the agreement: the scenarios of test/runtime/scenarios.test.ts
 * (4 nodes, 3600 s, one covered outage, deadline 5000 s after T0, the paper site; a working
 * node fails at 1800 s, halfway), run by the server on a simulated clock: the agreement is
 * created over SOAP, the node failure reported over the admin API, and the outcome read
 * from AgreementState, the audit trail and the post-runtime report.
 *
 * Figures by hand (see the runtime scenarios): 4 checkpoints, t_compint 720 s, checkpoint i
 * written at 30 + 840 i s; after the failure at 1800 s the job restarts at 1830 s from the
 * checkpoint of interval 2 and completes at 1830 + 3 x 720 + 2 x 120 = 4230 s.
 */
const deadline = at(5000);
let server: SimulatedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function agreeTo(s: SimulatedServer, level: GuaranteeLevel): Promise<string> {
  return (await s.client.createAgreement(await deadlineOffer(s.client, { level, deadline }))).agreementId;
}

async function failWorkingNode(s: SimulatedServer, id: string) {
  const booking = (await planOf(s)).bookings.find((b) => b.id === id);
  const node = booking?.nodeIds[0] as string;
  await s.advanceTo(1800);
  const answer = await postJson<{
    node: string;
    agreements: string[];
    moved: string[];
    problematic: Array<{ id: string }>;
  }>(`${s.url}/api/nodes/${node}/fail`);
  expect(answer.status).toBe(200);
  await s.execution.idle();
  return { node, answer: answer.body };
}

async function reportOf(s: SimulatedServer, id: string): Promise<StoredReport['report']> {
  const { status, body } = await getJson<StoredReport['report']>(`${s.url}/api/agreements/${id}/report`);
  expect(status).toBe(200);
  return body;
}

describe('through the agreement: a node fails halfway', () => {
  it('Standard restarts from its last checkpoint on a spare node and meets its deadline: Complete, Fulfilled, no penalty', async () => {
    server = await simulatedServer();
    const s = server;
    const id = await agreeTo(s, 'Standard');
    expect(await s.client.state(id)).toMatchObject({
      state: 'Observed',
      serviceTerms: [{ termName: 'Job', state: 'NotReady' }],
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'NotDetermined' }],
    });
    await s.advanceTo(900);
    expect((await s.client.state(id)).serviceTerms[0]?.state).toBe('Ready'); // computing since 30 s

    const { node, answer } = await failWorkingNode(s, id);
    expect(answer.agreements).toEqual([id]);
    await s.runUntilIdle();

    const state = await s.client.state(id);
    expect(state).toEqual({
      state: 'Complete',
      serviceTerms: [{ termName: 'Job', state: 'Completed' }],
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'Fulfilled' }],
    });
    const report = await reportOf(s, id);
    expect(report.happened.outcome).toBe('completed');
    expect(secondsOf(report.happened.completed)).toBe(4230);
    expect(report.happened.outages).toEqual([{ at: '2026-11-23T00:30:00Z', node }]);
    expect(
      report.happened.restarts.map((r) => [secondsOf(r.at), r.fromInterval, r.cause, r.nodes.includes(node)]),
    ).toEqual([[1830, 2, 'outage', false]]);
    expect(report.happened.checkpoints.list.map((c) => [secondsOf(c.at), c.interval])).toEqual([
      [870, 1],
      [1710, 2],
      [2670, 3],
      [3510, 4],
    ]);
    expect(report.guarantees).toEqual([expect.objectContaining({ term: 'CompletionByDeadline', state: 'Fulfilled' })]);
    expect(report.guarantees[0]?.penalty).toBeUndefined();
    expect(report.totals).toEqual({ penalties: [], excused: [], rewards: [] });
    // The resource manager restarted the job from the checkpoint of interval 2.
    const starts = s.rm.callsOf('start', id);
    expect(starts.map((c) => c.fromCheckpoint)).toEqual([undefined, report.happened.checkpoints.list[1]?.reference]);
    // The text and the JSON are both stored under the data directory.
    expect(fs.readFileSync(path.join(s.dataDir, 'reports', `${id}.txt`), 'utf8')).toContain(
      'CompletionByDeadline (CompletedBy): Fulfilled',
    );
    const text = await (await fetch(`${s.url}/api/agreements/${id}/report?format=text`)).text();
    expect(text).toContain(`restart (outage) at 2026-11-23T00:30:30Z`);
  });

  it('Legacy in the same situation is Violated, with the penalty from its assessment interval', async () => {
    server = await simulatedServer();
    const s = server;
    const id = await agreeTo(s, 'Legacy');
    const { answer } = await failWorkingNode(s, id);
    // No checkpoint: a restart needs 3630 s again, 5430 s > 5000 s. The scheduler keeps it in P.
    expect(answer.problematic.map((p) => p.id)).toEqual([id]);
    await s.advanceTo(5001);
    // Late, but the verdict waits for the evidence to be final: the job may still complete, and how late decides the penalty.
    expect(await s.client.state(id)).toMatchObject({
      state: 'Observed',
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'NotDetermined' }],
    });
    // 45 minutes after the deadline the scheduler gives the job up; the provider abandons it.
    await s.advanceTo(5000 + 45 * 60);
    await s.execution.advance(s.clock.now());
    await s.runUntilIdle();

    expect(await s.client.state(id)).toEqual({
      state: 'Complete',
      serviceTerms: [{ termName: 'Job', state: 'Completed' }],
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'Violated' }],
    });
    const report = await reportOf(s, id);
    expect(report.happened.outcome).toBe('failed');
    expect(report.happened.failure?.cause).toBe('abandoned');
    expect(report.happened.checkpoints).toMatchObject({ planned: 0, taken: 0 });
    // Given up 2700 s after the deadline: two started half hours at 50 EUR.
    expect(report.guarantees[0]).toMatchObject({ state: 'Violated', penalty: { amount: 100, currency: 'EUR' } });
    expect(report.guarantees[0]?.liability).toMatch(/^liable: Legacy/);
    expect(report.totals.penalties).toEqual([{ amount: 100, currency: 'EUR' }]);
  });

  it('Enhanced keeps its deadline in a full cluster because spare capacity was kept', async () => {
    server = await simulatedServer();
    const s = server;
    const id = await agreeTo(s, 'Enhanced');
    // A reservation takes the other three nodes for three hours: no free capacity is left.
    const reservation = (await s.client.createAgreement(await reservationOffer(s.client, 3, at(60), at(3 * 3600))))
      .agreementId;
    const booking = (await planOf(s)).bookings.find((b) => b.id === id);
    expect(booking?.spareNodeIds).toHaveLength(1);
    const spare = booking?.spareNodeIds[0] as string;
    await failWorkingNode(s, id);
    await s.runUntilIdle();

    expect(await s.client.state(id)).toMatchObject({
      state: 'Complete',
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'Fulfilled' }],
    });
    const report = await reportOf(s, id);
    expect(report.happened.restarts.map((r) => [secondsOf(r.at), r.fromInterval, r.nodes.includes(spare)])).toEqual([
      [1830, 2, true],
    ]);
    expect(secondsOf(report.happened.completed)).toBe(4230);
    expect(report.totals.penalties).toEqual([]);
    // The reservation was not touched, and kept its nodes throughout its window.
    expect(await s.client.state(reservation)).toMatchObject({
      state: 'Complete',
      guaranteeTerms: [{ termName: 'NodesThroughWindow', state: 'Fulfilled' }],
    });
  });
});

describe("the run time follows the agreement's other changes", () => {
  it('a pending agreement runs once accepted; a terminated one stops, and its report says its terms were not judged', async () => {
    server = await simulatedServer();
    const s = server;
    const pending = await s.client
      .createPendingAgreement(await deadlineOffer(s.client, { level: 'Standard', deadline }))
      .then((r) => r.agreementId);
    await s.advanceTo(600);
    expect(s.rm.callsOf('prepare', pending)).toEqual([]); // pending: booked, not run
    await s.client.decide(pending, 'Accept');
    await s.advanceTo(1200);
    expect(s.rm.callsOf('start', pending)).toHaveLength(1);
    expect((await s.client.state(pending)).serviceTerms[0]?.state).toBe('Ready');

    await s.client.terminate(pending);
    await s.runUntilIdle();
    expect(s.rm.callsOf('stop', pending).map((c) => c.reason)).toEqual(['terminated']);
    expect(await s.client.state(pending)).toEqual({
      state: 'Terminated',
      serviceTerms: [{ termName: 'Job', state: 'Completed' }],
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'NotDetermined' }],
    });
    const report = await reportOf(s, pending);
    expect(report.happened.failure).toMatchObject({ cause: 'abandoned', reason: 'the agreement was terminated' });
    expect(report.guarantees).toEqual([]);
    expect(report.notes).toEqual([
      'The agreement was Terminated before the job ended: its guarantee terms were not judged.',
    ]);
  });
});
