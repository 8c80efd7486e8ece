import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { at, deadlineOffer, secondsOf, simulatedServer } from './run-time-support.js';

/**
 * Restart safety of the run time: the server stops while a job computes (after its first
 * checkpoint, at 870 s), and a new server on the same data directory starts at 1200 s. The
 * job resumes from that checkpoint (found on the audit trail), computes the four intervals
 * left and completes; its agreement completes as if nothing had happened, except for the
 * restart on the record.
 */
describe('the run time after a restart', () => {
  it('resumes a job that was computing from its last checkpoint, and starts one that was waiting', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-runtime-restart-'));
    const first = await simulatedServer({ dataDir, sqlite: true });
    const running = (
      await first.client.createAgreement(await deadlineOffer(first.client, { level: 'Standard', deadline: at(5000) }))
    ).agreementId;
    // Waiting: 6 nodes do not fit beside the first job's 4, so it is planned after it.
    const waiting = (
      await first.client.createAgreement(
        await deadlineOffer(first.client, { level: 'Standard', nodes: 6, deadline: at(12_000) }),
      )
    ).agreementId;
    await first.advanceTo(1000);
    expect((await first.client.state(running)).serviceTerms[0]?.state).toBe('Ready');
    expect((await first.client.state(waiting)).serviceTerms[0]?.state).toBe('NotReady');
    const checkpoint = first.rm.callsOf('checkpoint', running)[0]?.reference as string;
    expect(checkpoint).toBeDefined();
    await first.close();

    const second = await simulatedServer({ dataDir, sqlite: true, startAt: at(1200) });
    try {
      await second.runUntilIdle();
      expect(await second.client.state(running)).toMatchObject({
        state: 'Complete',
        guaranteeTerms: [{ state: 'Fulfilled' }],
      });
      expect(await second.client.state(waiting)).toMatchObject({
        state: 'Complete',
        guaranteeTerms: [{ state: 'Fulfilled' }],
      });
      // Started again at 1200 s, computing from 1230 s on: the four intervals left, 4 x 720 + 3 x 120 s.
      expect(second.rm.callsOf('start', running).map((c) => [secondsOf(c.at), c.fromCheckpoint])).toEqual([
        [1230, checkpoint],
      ]);
      const waited = second.rm.callsOf('start', waiting);
      expect(waited).toHaveLength(1);
      expect(waited[0]?.fromCheckpoint).toBeUndefined();
      expect(secondsOf(waited[0]?.at)).toBeGreaterThan(1230);
      const report = (await (await fetch(`${second.url}/api/agreements/${running}/report`)).json()) as {
        happened: { restarts: Array<{ at: string; fromInterval: number; cause: string }>; completed: string };
      };
      expect(report.happened.restarts.map((r) => [secondsOf(r.at), r.fromInterval, r.cause])).toEqual([
        [1230, 1, 'planned'],
      ]);
      expect(secondsOf(report.happened.completed)).toBe(1230 + 4 * 720 + 3 * 120);
    } finally {
      await second.close();
    }
    const store = SqliteStore.openReadOnly(path.join(dataDir, 'wsag.db'));
    try {
      const actions = (await store.audit.entries({ subject: { kind: 'agreement', id: running } })).map((e) => e.action);
      expect(actions.filter((a) => a === 'checkpoint-taken').length).toBeGreaterThanOrEqual(2);
      expect(actions.at(-1)).toBe('completed');
    } finally {
      await store.close();
    }
  });
});
