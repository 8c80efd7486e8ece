import { spawnSync } from 'node:child_process';
import type { CpuScheduling } from '../engine/configuration/index.js';

/** What became of asking for a policy: in force, or why not. */
export type SchedulingOutcome = { policy: 'SCHED_BATCH' } | { policy: 'normal'; why: string };

/**
 * Puts every thread of process `pid` under SCHED_BATCH, with util-linux's chrt (a policy any
 * process may choose for itself, no privilege needed). Threads started later inherit it from
 * the thread that starts them, so this runs before the server starts its own.
 *
 * Why: under load each thread the event loop wakes (the document thread it hands an offer
 * to, libuv's thread syncing the log, a client answered) would otherwise take the loop's core
 * at once whenever the other core is busy. A batch thread does not preempt on wakeup: it
 * takes an idle core, or waits for the scheduler's tick. Same weight, same share of the CPU.
 * The loop, a batch thread too, then also waits when it wakes to a request while both cores
 * are busy: at a steady rate the tail of the latencies grows (docs/deployment.md "CPU
 * scheduling"), which is why it is the operator's choice.
 */
export function scheduleProcess(
  scheduling: CpuScheduling,
  pid = process.pid,
  platform: NodeJS.Platform = process.platform,
): SchedulingOutcome {
  if (scheduling === 'normal') return { policy: 'normal', why: 'WSAG_CPU_SCHEDULING is normal' };
  if (platform !== 'linux') return { policy: 'normal', why: `SCHED_BATCH is a Linux policy and this is ${platform}` };
  const run = spawnSync('chrt', ['--batch', '--all-tasks', '--pid', '0', String(pid)], {
    encoding: 'utf8',
    timeout: 5000,
  });
  if (run.error) return { policy: 'normal', why: `chrt (util-linux) could not run: ${run.error.message}` };
  if (run.status !== 0)
    return { policy: 'normal', why: `chrt failed: ${(run.stderr || `exit status ${run.status}`).trim()}` };
  return { policy: 'SCHED_BATCH' };
}

/** One line for the start-up banner. */
export function describeScheduling(outcome: SchedulingOutcome): string {
  return outcome.policy === 'SCHED_BATCH'
    ? 'SCHED_BATCH, every thread (WSAG_CPU_SCHEDULING=batch)'
    : `the default (${outcome.why})`;
}
