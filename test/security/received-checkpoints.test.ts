import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at, deadlineOffer, simulatedServer, type SimulatedServer } from '../engine/run-time-support.js';

/**
 * A checkpoint received for an agreement does not outlive it. Uploaded
 * while the agreement is Observed, it is removed from the disk once the agreement ends.
 */
describe('received checkpoints', () => {
  let s: SimulatedServer;
  beforeAll(async () => {
    s = await simulatedServer({ nodes: 8 });
  });
  afterAll(async () => s?.close());

  it('are removed when their agreement ends', async () => {
    const { agreementId } = await s.client.createAgreement(
      await deadlineOffer(s.client, { level: 'Standard', deadline: at(20_000), resumesFromCheckpointBytes: 1024 }),
    );
    const body = Buffer.from('a checkpoint');
    const put = await fetch(`${s.url}/api/agreements/${agreementId}/checkpoint`, {
      method: 'PUT',
      body,
      headers: {
        'content-type': 'application/octet-stream',
        'x-checkpoint-sha256': createHash('sha256').update(body).digest('hex'),
      },
    });
    expect(put.status).toBe(204);
    await s.execution.idle();
    const file = path.join(s.dataDir, 'checkpoints', 'received', `${agreementId}.checkpoint`);
    expect(fs.existsSync(file)).toBe(true);
    await s.client.terminate(agreementId);
    for (let i = 0; i < 50 && fs.existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fs.existsSync(file)).toBe(false);
  });
});
