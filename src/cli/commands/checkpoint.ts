import {
  checkpointBounds,
  checkpointSeconds,
  checkpointTiming,
  chooseCheckpointCount,
  countForFrequency,
  optimalCheckpointCount,
  perHour,
  planFor,
  type CheckpointBounds,
  type CheckpointTiming,
} from '../../scheduler/checkpoint-plan.js';
import { defaultSiteTiming, type SiteTiming } from '../../scheduler/site.js';
import { jsonHelp, jsonOption, type Command } from '../command.js';
import type { Args } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, table } from '../output.js';

const site = defaultSiteTiming;

export const checkpointCommand: Command = {
  name: 'checkpoint',
  summary: "plan a job's checkpoints offline: count, interval, worst-case runtime",
  synopsis:
    'wsag checkpoint --runtime SECONDS (--checkpoint-cost SECONDS | [--nodes N] [--memory-gb GB] [--sequential]) ' +
    '[--storage-gb GB] [--outages N] [--slowdown FACTOR] [--migration-seconds S] ' +
    '[--deadline-seconds S [--slot-seconds S]] [--frequency PER_HOUR] [--json]',
  description: [
    "Computes a fault-tolerant job's checkpoint plan with the timing model of Hovestadt 2006",
    'section 3.4 (formulas 3.1-3.17), without a server: the optimal number of checkpoints',
    'for the covered outages (3.16), the computation between checkpoints (3.6), the slot',
    'the job needs without outages (t_minslot, 3.7), its worst-case runtime (t_jobmax, 3.8)',
    'and the worst-case slot with initialisation, restarts and deinitialisation.',
    'Initialisation, deinitialisation and the derived checkpoint cost use the default site',
    `timing (src/scheduler/site.ts: node init ${site.nodeInitSeconds} s, mount ${site.storageMountSeconds} s, ` +
      `deinit ${site.deinitSeconds} s, ...).`,
    'With --deadline-seconds it prints the bounds on the count (3.9-3.11) and the count',
    'chosen within them, or why no count works (exit 1).',
  ],
  optionHelp: [
    "  --runtime SECONDS  t_i, the job's runtime as the user estimates it (required)",
    '  --checkpoint-cost SECONDS',
    '                     t_cp, one checkpoint (3.4); or derive it from the three below',
    '  --nodes N          |P|, nodes the job runs on (default 1)',
    `  --memory-gb GB     main memory per node to checkpoint (default ${site.defaultMemoryPerNodeGB}: all of it)`,
    '  --sequential       a sequential checkpointer: t_cp = |P| t_cpnode(m) + t_snapshot(s)',
    "                     (default: parallel, one node's time)",
    "  --storage-gb GB    the job's storage: initialisation, rollback, snapshot (default 0)",
    '  --outages N        n_romax, resource outages the plan covers (default 1)',
    '  --slowdown FACTOR  f_slow (3.3); default 1, so --runtime is t_hat itself',
    '                     (the site assumes 1.01 under checkpointing)',
    '  --migration-seconds S',
    '                     t_migr per outage (3.5); default 0, a restart inside the cluster',
    '  --deadline-seconds S',
    '                     time from the start until the deadline: print the bounds and the chosen count',
    '  --slot-seconds S   length of the free slot (default: up to the deadline)',
    '  --frequency PER_HOUR',
    '                     requested checkpoints per hour of computation (t_hat)',
    jsonHelp,
  ],
  examples: [
    '  wsag checkpoint --runtime 3600 --checkpoint-cost 120 --outages 2',
    '  wsag checkpoint --runtime 86400 --nodes 16 --memory-gb 64 --storage-gb 500 --sequential',
    '  wsag checkpoint --runtime 3600 --checkpoint-cost 120 --outages 2 --deadline-seconds 6000 --frequency 5',
  ],
  options: {
    ...jsonOption,
    runtime: { type: 'string' },
    'checkpoint-cost': { type: 'string' },
    nodes: { type: 'string' },
    'memory-gb': { type: 'string' },
    sequential: { type: 'boolean' },
    'storage-gb': { type: 'string' },
    outages: { type: 'string' },
    slowdown: { type: 'string' },
    'migration-seconds': { type: 'string' },
    'deadline-seconds': { type: 'string' },
    'slot-seconds': { type: 'string' },
    frequency: { type: 'string' },
  },
  positionals: [],
  async run(args, ctx) {
    const input = readInput(args);
    const { timing } = input;
    const optimum = optimalCheckpointCount(timing.tHat, timing.tCp, timing.outages);

    let count: number;
    let chosenBy: 'optimum' | 'frequency' | 'clamped optimum';
    let bounds: CheckpointBounds | undefined;
    if (input.deadlineSeconds !== undefined) {
      const slot = input.slotSeconds ?? input.deadlineSeconds;
      const choice = chooseCheckpointCount(timing, input.deadlineSeconds, slot, input.frequency);
      if ('reason' in choice) throw new CliError(`no checkpoint plan fits: ${choice.reason}`);
      bounds = checkpointBounds(timing, input.deadlineSeconds, slot);
      count = choice.count;
      chosenBy = input.frequency !== undefined ? 'frequency' : count === optimum ? 'optimum' : 'clamped optimum';
    } else if (input.frequency !== undefined) {
      count = countForFrequency(input.frequency, timing.tHat);
      chosenBy = 'frequency';
    } else {
      count = optimum;
      chosenBy = 'optimum';
    }
    const plan = planFor(timing, count);

    if (args.flag('json')) {
      printJson(ctx.out, {
        runtimeSeconds: input.runtimeSeconds,
        slowdown: input.slowdown,
        checkpointCost: input.derived ? 'derived' : 'given',
        ...(input.derived ? { derivedFrom: input.derived } : {}),
        storageGB: input.storageGB,
        timing,
        optimum,
        count,
        chosenBy,
        checkpointsPerHour: perHour(count, timing.tHat),
        ...(input.frequency !== undefined ? { requestedPerHour: input.frequency } : {}),
        ...(input.deadlineSeconds !== undefined
          ? { deadlineSeconds: input.deadlineSeconds, slotSeconds: input.slotSeconds ?? input.deadlineSeconds }
          : {}),
        ...(bounds
          ? {
              bounds: {
                ...bounds,
                minPerHour: perHour(bounds.min, timing.tHat),
                maxPerHour: perHour(Math.min(bounds.max, bounds.slotMax), timing.tHat),
              },
            }
          : {}),
        plan,
      });
      return;
    }

    const n = timing.outages;
    const cpFrom = input.derived
      ? `one checkpoint: ${input.derived.sequential ? `${input.derived.nodes} node(s) x ` : ''}` +
        `${s(site.checkpointSecondsPerNodeGB)} s/GB x ${s(input.derived.memoryPerNodeGB)} GB + ` +
        `${s(site.snapshotSecondsPerGB)} s/GB x ${s(input.storageGB)} GB storage, ` +
        `${input.derived.sequential ? 'sequential' : 'parallel'} checkpointer (3.4)`
      : 'one checkpoint, as given (3.4)';
    const optimumText =
      n > 0 && timing.tCp > 0
        ? `optimum for ${n} covered outage(s): x = -1 + sqrt(${n} x ${s(timing.tHat)} / ${s(timing.tCp)}) = ` +
          `${(-1 + Math.sqrt((n * timing.tHat) / timing.tCp)).toFixed(3)} (3.16)`
        : n > 0
          ? `optimum for ${n} covered outage(s) (3.16)`
          : 'optimum without covered outages: no checkpoints (3.12)';
    const countText =
      chosenBy === 'frequency'
        ? `requested ${input.frequency} per hour of computation${bounds ? ', within the bounds' : ''} (the ` +
          `optimum is ${optimum})`
        : chosenBy === 'clamped optimum'
          ? `the optimum ${optimum}, clamped to the bounds`
          : optimumText;
    const rows: string[][] = [
      ['t_hat', `${s(timing.tHat)} s`, `runtime ${s(input.runtimeSeconds)} s x slowdown ${input.slowdown} (3.3)`],
      ['t_cp', `${s(timing.tCp)} s`, cpFrom],
      ['n_cp', String(count), countText],
      ['t_compint', `${s(plan.intervalSeconds)} s`, 'computation between checkpoints (3.6)'],
      [
        't_minslot',
        `${s(plan.minSlotSeconds)} s`,
        `slot without outages: t_initnew ${s(timing.tInitNew)} + t_hat + ${count} x t_cp + t_deinit ` +
          `${s(timing.tDeinit)} (3.7)`,
      ],
      [
        't_jobmax',
        `${s(plan.jobMaxSeconds)} s`,
        `worst-case runtime with ${n} outage(s): t_hat + ${count} x t_cp + ${n} x (t_migr ${s(timing.tMigr)} ` +
          `+ t_compint) (3.8)`,
      ],
      [
        'worst slot',
        `${s(plan.worstCaseSeconds)} s`,
        `worst-case slot with initialisation and restarts: t_initnew + t_jobmax + ${n} x (t_initrestart ` +
          `${s(timing.tInitRestart)} + t_cp) + t_deinit`,
      ],
    ];
    if (input.deadlineSeconds !== undefined && bounds) {
      const upper = Math.min(bounds.max, bounds.slotMax);
      rows.push(
        [
          'deadline',
          `${s(input.deadlineSeconds)} s`,
          `time until the deadline; free slot ${s(input.slotSeconds ?? input.deadlineSeconds)} s`,
        ],
        [
          'bounds',
          `${bounds.min}..${upper}`,
          `checkpoints: at least ${bounds.min} and at most ${bounds.max} for the deadline, at most ` +
            `${bounds.slotMax} for the slot; ` +
            `${perHour(bounds.min, timing.tHat).toFixed(2)} to ${perHour(upper, timing.tHat).toFixed(2)} per ` +
            `hour (3.9-3.11)`,
        ],
      );
    }
    ctx.out(
      `checkpoint plan: ${count} checkpoint(s), one every ${s(plan.intervalSeconds)} s of computation; ` +
        `worst-case runtime ${s(plan.jobMaxSeconds)} s with ${n} outage(s)`,
    );
    for (const line of table(undefined, rows, '  ')) ctx.out(line);
  },
};

interface CheckpointInput {
  runtimeSeconds: number;
  slowdown: number;
  storageGB: number;
  /** How t_cp was derived; absent when --checkpoint-cost gave it. */
  derived?: { nodes: number; memoryPerNodeGB: number; sequential: boolean };
  timing: CheckpointTiming;
  deadlineSeconds?: number;
  slotSeconds?: number;
  frequency?: number;
}

function readInput(args: Args): CheckpointInput {
  const runtimeSeconds = numberOption(args, 'runtime', 'positive');
  if (runtimeSeconds === undefined) throw new UsageError("--runtime SECONDS is required (t_i, the job's runtime)");
  const given = numberOption(args, 'checkpoint-cost', 'positive');
  const nodes = numberOption(args, 'nodes', 'count');
  const memory = numberOption(args, 'memory-gb', 'positive');
  const sequential = args.flag('sequential');
  if (given !== undefined && (nodes !== undefined || memory !== undefined || sequential)) {
    throw new UsageError('give either --checkpoint-cost or --nodes/--memory-gb/--sequential to derive it, not both');
  }
  const storageGB = numberOption(args, 'storage-gb', 'non-negative') ?? 0;
  const outages = numberOption(args, 'outages', 'whole') ?? 1;
  const slowdown = numberOption(args, 'slowdown', 'slowdown') ?? 1;
  const migrationSeconds = numberOption(args, 'migration-seconds', 'non-negative') ?? 0;
  const deadlineSeconds = numberOption(args, 'deadline-seconds', 'positive');
  const slotSeconds = numberOption(args, 'slot-seconds', 'positive');
  if (slotSeconds !== undefined && deadlineSeconds === undefined)
    throw new UsageError('--slot-seconds needs --deadline-seconds');
  const frequency = numberOption(args, 'frequency', 'non-negative');

  const siteTiming: SiteTiming = { ...site, slowdownFactor: slowdown, parallelCheckpoint: !sequential };
  const derived =
    given === undefined
      ? { nodes: nodes ?? 1, memoryPerNodeGB: memory ?? site.defaultMemoryPerNodeGB, sequential }
      : undefined;
  const job = {
    runtimeSeconds,
    nodes: derived?.nodes ?? 1,
    memoryPerNodeGB: derived?.memoryPerNodeGB ?? site.defaultMemoryPerNodeGB,
    storageGB,
    coveredOutages: outages,
    migrationSeconds,
  };
  const timing = checkpointTiming(siteTiming, job);
  timing.tCp = given ?? checkpointSeconds(siteTiming, job.nodes, job.memoryPerNodeGB, storageGB);
  return {
    runtimeSeconds,
    slowdown,
    storageGB,
    ...(derived ? { derived } : {}),
    timing,
    ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}),
    ...(slotSeconds !== undefined ? { slotSeconds } : {}),
    ...(frequency !== undefined ? { frequency } : {}),
  };
}

type NumberKind = 'positive' | 'non-negative' | 'whole' | 'count' | 'slowdown';

const kindText: Record<NumberKind, string> = {
  positive: 'a number greater than 0',
  'non-negative': 'a number, 0 or more',
  whole: 'a whole number, 0 or more',
  count: 'a whole number, 1 or more',
  slowdown: 'a number, 1 or more',
};

/** A numeric option: undefined when absent, a UsageError naming the option when malformed or out of range. */
function numberOption(args: Args, name: string, kind: NumberKind): number | undefined {
  const text = args.string(name);
  if (text === undefined) return undefined;
  const decimal = /^(\d+(\.\d*)?|\.\d+)$/.test(text.trim());
  const value = decimal ? Number(text.trim()) : Number.NaN;
  const ok =
    Number.isFinite(value) &&
    (kind === 'positive'
      ? value > 0
      : kind === 'non-negative'
        ? value >= 0
        : kind === 'whole'
          ? Number.isInteger(value)
          : kind === 'count'
            ? Number.isInteger(value) && value >= 1
            : value >= 1);
  if (!ok) throw new UsageError(`--${name} must be ${kindText[kind]}, got "${text}"`);
  return value;
}

/** Seconds (or any figure) for people: at most two decimals, no trailing zeros. */
function s(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 100) / 100) : 'infinite';
}
