import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObservedAgreementRepository } from '../../src/engine/agreements/agreement-changes.js';
import { AgreementService } from '../../src/engine/agreements/agreement-service.js';
import { NotificationService, type StateNotification } from '../../src/engine/execution/notifications.js';
import { PlanningService } from '../../src/engine/planning/planning-service.js';
import type { Subscription } from '../../src/engine/execution/ports.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { SubscriptionFile } from '../../src/store/subscription-file.js';
import { cluster } from '../scheduler/support.js';
import { makeAgreement } from '../store/fixtures/make-agreement.js';

const owner = { identity: 'anonymous', isAdmin: false };

function setup(send: (url: string, n: StateNotification) => Promise<void>) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-subs-')), 'subscriptions.json');
  const repository = new ObservedAgreementRepository(new MemoryAgreementRepository());
  const clock = { now: () => new Date('2030-01-01T09:00:00Z') };
  const agreements = new AgreementService(repository, new PlanningService(cluster(4)), clock);
  const waits: number[] = [];
  const failures: Array<{ url: string; final: boolean }> = [];
  let n = 0;
  const notifications = new NotificationService({
    agreements,
    subscriptions: new SubscriptionFile(file),
    ids: { next: () => `s${++n}` },
    clock,
    send,
    wait: async (ms) => void waits.push(ms),
    attempts: 3,
    backoffMs: 100,
    onFailure: (s: Subscription, _error, final) => failures.push({ url: s.url, final }),
  });
  repository.onChange((change) => notifications.agreementChanged(change));
  return { repository, agreements, notifications, waits, failures, file };
}

describe('NotificationService', () => {
  it('tries a few times with doubling waits, then gives up; the change itself is never held up', async () => {
    const sent: string[] = [];
    const { repository, agreements, notifications, waits, failures } = setup(async (url) => {
      sent.push(url);
      throw new Error('connection refused');
    });
    await repository.insert(makeAgreement());
    await notifications.subscribe('agr-1', 'http://127.0.0.1:9/cb', owner);
    const changed = await agreements.change(
      'agr-1',
      (a) => ({ ...a, serviceTerms: [{ termName: 'job', state: 'Ready', subState: 'Processing' }] }),
      { actor: 'system', action: 'test' },
    );
    expect(changed.serviceTerms[0]?.state).toBe('Ready');
    await notifications.idle();
    expect(sent).toEqual(['http://127.0.0.1:9/cb', 'http://127.0.0.1:9/cb', 'http://127.0.0.1:9/cb']);
    expect(waits).toEqual([100, 200]);
    expect(failures).toEqual([
      { url: 'http://127.0.0.1:9/cb', final: false },
      { url: 'http://127.0.0.1:9/cb', final: false },
      { url: 'http://127.0.0.1:9/cb', final: true },
    ]);
  });

  it('sends nothing for a change that leaves the states as they were, and keeps subscriptions across a restart', async () => {
    const sent: StateNotification[] = [];
    const { repository, agreements, notifications, file } = setup(async (_url, n) => void sent.push(n));
    await repository.insert(makeAgreement());
    await notifications.subscribe('agr-1', 'https://example.org/hook', owner);
    await agreements.change('agr-1', (a) => ({ ...a, updatedAt: new Date('2030-01-01T09:01:00Z') }), {
      actor: 'system',
      action: 'node-failed',
    });
    await notifications.idle();
    expect(sent).toEqual([]);
    expect(await new SubscriptionFile(file).list('agr-1')).toEqual([
      expect.objectContaining({ id: 's1', url: 'https://example.org/hook', subscriber: 'anonymous' }),
    ]);
    await agreements.terminate('agr-1', owner);
    await notifications.idle();
    expect(sent.map((n) => [n.state, n.serviceTerms[0]?.state])).toEqual([['Terminated', 'Completed']]);
    expect(await new SubscriptionFile(file).list('agr-1')).toEqual([]);
  });
});
