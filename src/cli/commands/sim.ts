import { duration, formatReport, loadInputs, simulate, WorkloadError, type SimProgress } from '../../sim/index.js';
import { jsonHelp, jsonOption, type Command } from '../command.js';
import type { Args, CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';

export const simCommand: Command = {
  name: 'sim',
  summary: 'replay a workload and failures against a cluster offline: acceptance, utilisation, violations, penalties',
  synopsis: 'wsag sim --workload FILE [--cluster FILE] [--until SECONDS] [--jobs] [--progress|--no-progress] [--json]',
  description: [
    'Simulates the planning scheduler without a server: the jobs of a workload arrive at their',
    'times and are admitted or refused, node failures and repairs re-plan the schedule, and',
    'jobs finish when their actual runtime is done (early finishes open gaps). Prints the',
    'acceptance rate of SLA requests, utilisation, deadlines met, reservations honoured, SLA',
    'violations and the penalties paid under each guarantee level\'s liability rule,',
    'checkpoints taken, suspensions, restarts and jobs that ran in pieces.',
    'The workload and cluster formats are in docs/cli.md; workloads/ has two examples.',
  ],
  optionHelp: [
    '  --workload FILE    the workload (JSON): jobs and failure events, times in seconds',
    '  --cluster FILE     the cluster description (JSON); default: the one the workload names',
    '  --until SECONDS    stop the simulation at this time; jobs still planned are reported open',
    '  --jobs             also list every job\'s outcome',
    '  --progress         show progress on stderr even when it is not a terminal (one line per 10 %)',
    '  --no-progress      no progress bar (default: a bar when stderr is a terminal)',
    jsonHelp,
  ],
  examples: [
    '  wsag sim --workload workloads/small.json',
    '  wsag sim --workload workloads/10k.json --json > report.json',
    '  wsag sim --workload workloads/10k.json --until 604800',
  ],
  options: {
    ...jsonOption,
    workload: { type: 'string' },
    cluster: { type: 'string' },
    until: { type: 'string' },
    jobs: { type: 'boolean' },
    progress: { type: 'boolean' },
    'no-progress': { type: 'boolean' },
  },
  positionals: [],
  async run(args, ctx) {
    const workloadFile = args.string('workload');
    if (workloadFile === undefined) throw new UsageError('--workload FILE is required');
    const until = untilOption(args);
    if (args.flag('progress') && args.flag('no-progress')) throw new UsageError('give --progress or --no-progress, not both');
    let inputs: ReturnType<typeof loadInputs>;
    try {
      inputs = loadInputs(workloadFile, args.string('cluster'));
    } catch (error) {
      if (error instanceof WorkloadError) throw new CliError(error.message);
      throw error;
    }
    const progress = progressReporter(args, ctx, until);
    const started = performance.now();
    const report = simulate(inputs.workload, inputs.cluster, {
      ...(until !== undefined ? { untilSeconds: until } : {}),
      ...(progress ? { onProgress: progress } : {}),
      jobs: args.flag('jobs'),
    });
    const wallSeconds = (performance.now() - started) / 1000;
    if (args.flag('json')) {
      printJson(ctx.out, report);
      return;
    }
    for (const line of formatReport(report)) ctx.out(line);
    ctx.out('');
    ctx.out(`(cluster ${inputs.clusterSource}; ${report.failures.events} failure event(s); simulated ${duration(report.span.endSeconds)} in ${wallSeconds.toFixed(1)} s)`);
  },
};

function untilOption(args: Args): number | undefined {
  const text = args.string('until');
  if (text === undefined) return undefined;
  const value = /^\d+(\.\d*)?$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isFinite(value)) throw new UsageError(`--until must be a number of seconds, 0 or more, got "${text}"`);
  return value;
}

/**
 * Progress on stderr: a bar redrawn in place on a terminal, or (with --progress on
 * something else) one line per tenth. The fraction is of the jobs settled (rejected,
 * completed or dropped), or of the time up to --until.
 */
function progressReporter(args: Args, ctx: CommandContext, until: number | undefined): ((p: SimProgress) => void) | undefined {
  if (args.flag('no-progress')) return undefined;
  const terminal = process.stderr.isTTY === true;
  if (!terminal && !args.flag('progress')) return undefined;
  const fractionOf = (p: SimProgress) => (p.done ? 1 : until !== undefined ? (until > 0 ? Math.min(1, p.simulatedSeconds / until) : 1) : p.total > 0 ? p.settled / p.total : 1);
  if (!terminal) {
    let shown = -1;
    return (p) => {
      const tenth = Math.floor(fractionOf(p) * 10);
      if (tenth <= shown && !p.done) return;
      if (p.done && shown === 10) return;
      shown = p.done ? 10 : tenth;
      ctx.err(`sim: ${tenth * 10} % (${p.settled} of ${p.total} jobs settled, simulated ${duration(p.simulatedSeconds)})`);
    };
  }
  let last = 0;
  return (p) => {
    const now = performance.now();
    if (!p.done && now - last < 100) return;
    last = now;
    const fraction = fractionOf(p);
    const width = 30;
    const filled = Math.round(fraction * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)} % ${p.settled}/${p.total} jobs, simulated ${duration(p.simulatedSeconds)}`;
    process.stderr.write(`\r${bar}\x1b[K${p.done ? '\n' : ''}`);
  };
}
