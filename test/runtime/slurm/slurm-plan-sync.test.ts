import { describe, expect, it } from 'vitest';
import type { Allocation } from '../../../src/domain/allocation.js';
import type { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import { SlurmPlanSync } from '../../../src/runtime/slurm/slurm-plan-sync.js';

/** A Slurm that has no reservations and records what it is asked (the real one is in slurm-*.test.ts). */
function recordingCli(calls: string[]): SlurmCli {
  return {
    run: async (tool: string, args: readonly string[]) => (calls.push(`${tool} ${args.join(' ')}`), ''),
  } as unknown as SlurmCli;
}

describe('SlurmPlanSync: when a tick looks at the plan', () => {
  it('lists the bookings only after they changed, reconciles only when the reservations differ, and every 30 s anyway', async () => {
    const calls: string[] = [];
    let listed = 0;
    let changes = 0;
    const plan = {
      booked: () => (listed++, new Map<string, Allocation>()),
      allocationOf: () => undefined,
      get bookingChanges() {
        return changes;
      },
    };
    const sync = new SlurmPlanSync(
      recordingCli(calls),
      'wsag',
      plan,
      () => {},
      (error) => {
        throw error;
      },
    );
    const at = (seconds: number) => new Date(Date.UTC(2026, 10, 26, 12, 0, seconds));

    await sync.tick(at(0));
    const reconciled = calls.length;
    expect(reconciled).toBeGreaterThan(0);
    const listedFirst = listed;

    await sync.tick(at(1));
    expect(listed).toBe(listedFirst);
    changes++;
    await sync.tick(at(2));
    expect(listed).toBe(listedFirst + 1);
    expect(calls.length).toBe(reconciled);
    await sync.tick(at(3));
    expect(listed).toBe(listedFirst + 1);

    await sync.tick(at(31));
    expect(calls.length).toBeGreaterThan(reconciled);
  });
});
