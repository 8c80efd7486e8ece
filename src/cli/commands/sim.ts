import {
  atOfferedLoad,
  compareBaselines,
  compareOverDraws,
  drawnFailures,
  formatDraws,
  compareInteractive,
  compareReports,
  formatBaselines,
  formatLoadSweep,
  sweepLoads,
  comparePricing,
  formatInteractiveComparison,
  duration,
  formatComparison,
  formatPricingComparison,
  formatReport,
  formatShareAccuracy,
  loadInputs,
  loadPeers,
  loadVoPolicy,
  runShareAccuracy,
  runSimulation,
  WorkloadError,
  refusedRequests,
  type RefusedRequests,
  type SimOptions,
  type SimProgress,
  type SimReport,
  type SimulatedPeersConfig,
  type Workload,
} from '../../sim/index.js';
import { jsonHelp, jsonOption, type Command } from '../command.js';
import type { Args, CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';
import { dropUndefined } from '../../domain/drop-undefined.js';
import { defaultPriceCurve, parsePriceCurve } from '../../domain/pricing.js';

export const simCommand: Command = {
  name: 'sim',
  summary: 'replay a workload and failures against a cluster offline: acceptance, utilisation, violations, penalties',
  synopsis:
    'wsag sim --workload FILE[.swf] [--cluster FILE] [--swf-rules FILE] [--failures FILE.csv | --failure-rate ' +
    'R [--failure-shape K]] [--peers FILE [--compare-migration] | --vo-policy FILE | --compare-pricing ' +
    '[--flexible SHARE] [--price-curve CURVE] | --interactive SHARE [--start-within SECONDS] [--session-nodes N] ' +
    '[--session-minutes M] [--warm-nodes N] | --baselines [--loads L,L,...] [--draws N]] [--refused leave|queue] ' +
    '[--until SECONDS] [--jobs] ' +
    '[--progress|--no-progress] [--json]',
  description: [
    'Simulates the planning scheduler without a server: the jobs of a workload arrive at their',
    'times and are admitted or refused, node failures and repairs re-plan the schedule, and',
    'jobs finish when their actual runtime is done (early finishes open gaps). Prints the',
    'acceptance rate of SLA requests, utilisation, deadlines met, reservations honoured, SLA',
    "violations and the penalties paid under each guarantee level's liability rule,",
    'checkpoints taken, suspensions, restarts and jobs that ran in pieces.',
    'With --peers, jobs a failure leaves unable to keep their promise go through the Migration',
    'Controller to simulated peer providers (capacity and prices from the peers file); the',
    'report adds migrations, prices paid and penalties saved. --compare-migration runs the',
    'workload without and with migration and prints the two side by side.',
    'With --vo-policy, the jobs of a multi-VO workload (each with a "vo") are admitted with and',
    'without the VO usage SLAs of the policy file, and the report is the share accuracy per VO:',
    'what each got of what it was entitled to and asked for, per epoch (docs/vo-policy.md).',
    'With --compare-pricing, the workload is admitted twice, with fixed prices and with demand',
    'prices (the price curve), a share of the customers (--flexible, default 0.5) taking the',
    'cheapest of their Advisory start slots: revenue, utilisation and acceptance side by side',
    '(docs/pricing.md).',
    'With --interactive SHARE, that share of the jobs become interactive (start within',
    '--start-within seconds, default 5, or refused) and the workload is admitted twice: taking',
    'only free nodes, and suspending running best-effort work to make room; start delays,',
    "refusals and what the suspended work lost side by side, beside CrossBroker's figures.",
    'The workload, cluster and peers formats are in docs/cli.md; workloads/ has examples. A',
    'workload file ending in .swf (or .swf.gz, as the archive publishes it) is a trace in the',
    'Standard Workload Format of the Parallel Workloads Archive, turned into requests by',
    'documented rules (docs/scheduler.md, "Real traces"); --failures reads node failures from',
    'a CSV file, --failure-rate draws them. --refused queue: the user of a refused SLA request',
    'submits the same job to the queue as best-effort work (as every job runs under FCFS + EASY);',
    'by default the user leaves with it.',
  ],
  optionHelp: [
    '  --workload FILE    the workload (JSON): jobs and failure events, times in seconds',
    '  --cluster FILE     the cluster description (JSON); default: the one the workload names (an SWF trace: ' +
      'MaxNodes of its header)',
    '  --swf-rules FILE   how an SWF trace\'s jobs become requests (JSON; docs/scheduler.md, "Real traces")',
    "  --failures FILE    node failures from a CSV file (node,down,up in seconds), replacing the workload's",
    "  --failure-rate R   node failures drawn at R per node and day (seeded), replacing the workload's",
    "  --failure-shape K  the Weibull shape of the gaps between a node's drawn failures: 1 (the default) is",
    '                     exponential; 0.7 is what Schroeder and Gibson (2006) measured on HPC systems',
    '  --peers FILE       migrate to these peers: a peers file whose peers have "simulation" terms',
    '  --compare-migration  run twice, without and with migration to --peers, and compare',
    '  --vo-policy FILE   report the share accuracy of this VO usage policy (with and without it)',
    '  --compare-pricing  fixed against demand prices on the workload (revenue, utilisation)',
    '  --flexible SHARE   with --compare-pricing: the share of customers who pick the cheapest slot (0 to 1)',
    '  --price-curve CURVE  with --compare-pricing: LOAD:FACTOR points (default 0:1,0.5:1,0.8:1.5,1:2)',
    "  --baselines        the workload also without checkpoints, with one checkpoint an hour, at Young/Daly's " +
      'interval, with the thesis optimum, with the fewest checkpoints alone, without planning (FCFS + EASY ' +
      'backfilling) and on a duplicate cluster',
    '  --loads L,L,...    with --baselines: the workload at each offered load (0.7,0.8,0.9: arrivals spread ' +
      'or squeezed)',
    '  --draws N          with --baselines and --failure-rate: N independent draws of the failures (the first ' +
      "is --failure-rate's own); means per draw, and in how many ours paid no more than every baseline",
    '  --interactive SHARE  make this share of the jobs interactive (0 to 1) and compare the two policies',
    '  --start-within SECONDS  with --interactive: the bound on the start (default 5)',
    "  --session-nodes N, --session-minutes M  with --interactive: cap each session's nodes and length",
    '  --warm-nodes N     with --interactive: nodes kept prepared for sessions, the last N (default a tenth of',
    '                     the cluster, unless its file marks warm nodes)',
    '  --refused WHAT     what the users of refused SLA requests do: leave (the default) or queue (their jobs ' +
      'run as best-effort work); with plain runs, --compare-migration and --baselines',
    '  --until SECONDS    stop the simulation at this time; jobs still planned are reported open',
    "  --jobs             also list every job's outcome",
    '  --progress         show progress on stderr even when it is not a terminal (one line per 10 %)',
    '  --no-progress      no progress bar (default: a bar when stderr is a terminal)',
    jsonHelp,
  ],
  examples: [
    '  wsag sim --workload workloads/small.json',
    '  wsag sim --workload workloads/10k.json --json > report.json',
    '  wsag sim --workload workloads/10k.json --until 604800',
    '  wsag sim --workload workloads/10k-failures.json --peers workloads/peers.json --compare-migration',
    '  wsag sim --workload workloads/vo-3.json --vo-policy workloads/vo-policy.json',
    '  wsag sim --workload workloads/10k.json --compare-pricing --flexible 0.5',
    '  wsag sim --workload workloads/10k.json --interactive 0.05',
    '  wsag sim --workload workloads/small.json --failure-rate 0.5 --baselines --draws 3',
  ],
  options: {
    ...jsonOption,
    workload: { type: 'string' },
    cluster: { type: 'string' },
    'swf-rules': { type: 'string' },
    failures: { type: 'string' },
    'failure-rate': { type: 'string' },
    'failure-shape': { type: 'string' },
    peers: { type: 'string' },
    'compare-migration': { type: 'boolean' },
    'vo-policy': { type: 'string' },
    'compare-pricing': { type: 'boolean' },
    flexible: { type: 'string' },
    'price-curve': { type: 'string' },
    interactive: { type: 'string' },
    'warm-nodes': { type: 'string' },
    baselines: { type: 'boolean' },
    refused: { type: 'string' },
    loads: { type: 'string' },
    draws: { type: 'string' },
    'start-within': { type: 'string' },
    'session-nodes': { type: 'string' },
    'session-minutes': { type: 'string' },
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
    if (args.flag('progress') && args.flag('no-progress'))
      throw new UsageError('give --progress or --no-progress, not both');
    const refusedText = args.string('refused');
    if (refusedText !== undefined && !refusedRequests.includes(refusedText as RefusedRequests))
      throw new UsageError(`--refused expects leave or queue, got "${refusedText}"`);
    const refused = refusedText as RefusedRequests | undefined;
    if (refused && ['compare-pricing', 'interactive', 'vo-policy'].some((o) => args.flag(o) || args.string(o)))
      throw new UsageError('--refused applies to plain runs, --compare-migration and --baselines');
    const peersFile = args.string('peers');
    const compare = args.flag('compare-migration');
    if (compare && peersFile === undefined)
      throw new UsageError('--compare-migration needs --peers FILE: the peers to migrate to');
    let inputs: ReturnType<typeof loadInputs>;
    let peers: SimulatedPeersConfig | undefined;
    try {
      const rate = args.string('failure-rate');
      if (rate !== undefined && !(Number(rate) >= 0 && Number(rate) <= 100))
        throw new UsageError(`--failure-rate expects failures per node and day, 0 to 100, got "${rate}"`);
      if (rate !== undefined && args.string('failures') !== undefined)
        throw new UsageError('give --failures FILE or --failure-rate R, not both');
      const shape = args.string('failure-shape');
      if (shape !== undefined && rate === undefined)
        throw new UsageError('--failure-shape shapes drawn failures: give --failure-rate R too');
      if (args.string('draws') !== undefined && (rate === undefined || !args.flag('baselines')))
        throw new UsageError('--draws draws the failures again for --baselines: give --baselines and --failure-rate R');
      if (shape !== undefined && !(Number(shape) >= 0.1 && Number(shape) <= 10))
        throw new UsageError(`--failure-shape expects a Weibull shape from 0.1 to 10, got "${shape}"`);
      inputs = loadInputs(
        workloadFile,
        args.string('cluster'),
        dropUndefined({
          swfRulesFile: args.string('swf-rules'),
          failuresFile: args.string('failures'),
          failureRate: rate === undefined ? undefined : Number(rate),
          failureShape: shape === undefined ? undefined : Number(shape),
        }),
      );
      peers = peersFile !== undefined ? loadPeers(peersFile) : undefined;
    } catch (error) {
      if (error instanceof WorkloadError) throw new CliError(error.message);
      throw error;
    }
    if (args.flag('compare-pricing')) {
      if (peersFile !== undefined || args.string('vo-policy') !== undefined)
        throw new UsageError('--compare-pricing is an experiment of its own: give it without --peers and --vo-policy');
      const flexible = Number(args.string('flexible') ?? 0.5);
      if (!(flexible >= 0 && flexible <= 1))
        throw new UsageError(`--flexible expects a share from 0 to 1, got "${args.string('flexible')}"`);
      const curveText = args.string('price-curve');
      const curve = curveText === undefined ? defaultPriceCurve : parsePriceCurve(curveText);
      if ('error' in curve) throw new UsageError(`--price-curve: ${curve.error}`);
      const comparison = comparePricing(
        inputs.workload,
        inputs.cluster,
        { currency: 'EUR', nodeHour: 1, preparatoryFeeRate: 0, curve },
        { flexible, slots: 3 },
      );
      if (args.flag('json')) return printJson(ctx.out, comparison);
      for (const line of formatPricingComparison(comparison, 'EUR')) ctx.out(line);
      return;
    }
    if (args.flag('baselines')) {
      const loadsText = args.string('loads');
      const loads = loadsText?.split(',').map((l) => Number(l.trim()));
      if (loads?.some((l) => !(l > 0 && l <= 2)))
        throw new UsageError(
          `--loads expects offered loads above 0 and at most 2, separated by commas (0.7,0.8,0.9), got ` +
            `"${loadsText}"`,
        );
      const drawsText = args.string('draws');
      if (drawsText !== undefined) {
        const draws = Number(drawsText);
        if (!(Number.isInteger(draws) && draws >= 1 && draws <= 1000))
          throw new UsageError(`--draws expects a whole number of failure draws from 1 to 1000, got "${drawsText}"`);
        const rate = Number(args.string('failure-rate'));
        const shape = args.string('failure-shape');
        const drawn = Array.from({ length: draws }, (_, k) => ({
          ...inputs.workload,
          failures: drawnFailures(inputs.workload, inputs.cluster, rate, shape === undefined ? 1 : Number(shape), k),
        }));
        const options = dropUndefined({ peers, refused });
        const results = [];
        for (const load of loads ?? [undefined]) {
          const at = (w: Workload) => (load === undefined ? w : atOfferedLoad(w, inputs.cluster.nodes.length, load));
          results.push({ load, comparison: await compareOverDraws(drawn.map(at), inputs.cluster, options) });
        }
        if (args.flag('json')) return printJson(ctx.out, loads ? { loads: results } : results[0]?.comparison);
        for (const { load, comparison } of results) {
          const lines = formatDraws(comparison, inputs.workload.currency);
          if (load === undefined) for (const line of lines) ctx.out(line);
          else for (const line of [`offered load ${(load * 100).toFixed(0)} %`, ...lines.slice(2), '']) ctx.out(line);
        }
        return;
      }
      if (loads !== undefined) {
        const sweep = await sweepLoads(inputs.workload, inputs.cluster, loads, dropUndefined({ peers, refused }));
        if (args.flag('json')) return printJson(ctx.out, sweep);
        for (const line of formatLoadSweep(sweep, inputs.workload.currency)) ctx.out(line);
        return;
      }
      const comparison = await compareBaselines(inputs.workload, inputs.cluster, dropUndefined({ peers, refused }));
      if (args.flag('json')) return printJson(ctx.out, comparison);
      for (const line of formatBaselines(comparison, inputs.workload.currency)) ctx.out(line);
      return;
    }
    const interactiveShare = args.string('interactive');
    if (interactiveShare !== undefined) {
      if (peersFile !== undefined || args.string('vo-policy') !== undefined || args.flag('compare-pricing'))
        throw new UsageError(
          '--interactive is an experiment of its own: give it without --peers, --vo-policy and --compare-pricing',
        );
      const share = Number(interactiveShare);
      if (!(share > 0 && share <= 1))
        throw new UsageError(
          `--interactive expects the share of jobs made interactive, above 0 and at most 1, got "${interactiveShare}"`,
        );
      const bound = Number(args.string('start-within') ?? 5);
      if (!(Number.isInteger(bound) && bound >= 0 && bound <= 3600))
        throw new UsageError(
          `--start-within expects whole seconds from 0 to 3600, got "${args.string('start-within')}"`,
        );
      const cap = (name: string) => {
        const text = args.string(name);
        if (text === undefined) return undefined;
        if (!/^[1-9][0-9]*$/.test(text))
          throw new UsageError(`--${name} expects a whole number, 1 or more, got "${text}"`);
        return Number(text);
      };
      const nodes = cap('session-nodes');
      const minutes = cap('session-minutes');
      // Sessions start within seconds only on nodes kept prepared: a tenth of the cluster unless it marks its own.
      const ownWarm = inputs.cluster.nodes.filter((n) => n.warm).length;
      const warmNodes = ownWarm || (cap('warm-nodes') ?? Math.ceil(inputs.cluster.nodes.length / 10));
      if (ownWarm && args.string('warm-nodes') !== undefined)
        throw new UsageError(`--warm-nodes: the cluster marks its own ${ownWarm} warm node(s); give one or the other`);
      const comparison = compareInteractive(inputs.workload, inputs.cluster, {
        share,
        boundSeconds: bound,
        warmNodes,
        ...(nodes ? { maxNodes: nodes } : {}),
        ...(minutes ? { maxSeconds: minutes * 60 } : {}),
      });
      if (args.flag('json')) return printJson(ctx.out, comparison);
      for (const line of formatInteractiveComparison(comparison)) ctx.out(line);
      return;
    }
    const policyFile = args.string('vo-policy');
    if (policyFile !== undefined) {
      if (peersFile !== undefined) throw new UsageError('--vo-policy and --peers are separate experiments: give one');
      let policy: ReturnType<typeof loadVoPolicy>;
      try {
        policy = loadVoPolicy(policyFile);
      } catch (error) {
        if (error instanceof WorkloadError) throw new CliError(error.message);
        throw error;
      }
      const withShares = runShareAccuracy(inputs.workload, inputs.cluster, policy, true);
      const without = runShareAccuracy(inputs.workload, inputs.cluster, policy, false);
      if (args.flag('json')) return printJson(ctx.out, { withShares, without });
      for (const line of formatShareAccuracy(withShares, without)) ctx.out(line);
      return;
    }
    const started = performance.now();
    const run = (withPeers: SimulatedPeersConfig | undefined, label: string): Promise<SimReport> => {
      const progress = progressReporter(args, ctx, until, label);
      const options: SimOptions = {
        ...(until !== undefined ? { untilSeconds: until } : {}),
        ...(progress ? { onProgress: progress } : {}),
        ...(withPeers ? { peers: withPeers } : {}),
        ...(refused ? { refused } : {}),
        jobs: args.flag('jobs'),
      };
      return runSimulation(inputs.workload, inputs.cluster, options);
    };
    const source = `cluster ${inputs.clusterSource}${peersFile !== undefined ? `; peers ${peersFile}` : ''}`;
    if (compare) {
      const without = await run(undefined, 'sim without migration');
      const withMigration = await run(peers, 'sim with migration');
      const wallSeconds = (performance.now() - started) / 1000;
      const comparison = compareReports(without, withMigration);
      if (args.flag('json')) {
        printJson(ctx.out, comparison);
        return;
      }
      for (const line of formatComparison(comparison)) ctx.out(line);
      ctx.out('');
      ctx.out(
        `(${source}; ${without.failures.events} failure event(s); two runs of ` +
          `${duration(without.span.endSeconds)} simulated in ${wallSeconds.toFixed(1)} s)`,
      );
      return;
    }
    const report = await run(peers, 'sim');
    const wallSeconds = (performance.now() - started) / 1000;
    if (args.flag('json')) {
      printJson(ctx.out, report);
      return;
    }
    for (const line of formatReport(report)) ctx.out(line);
    ctx.out('');
    ctx.out(
      `(${source}; ${report.failures.events} failure event(s); simulated ${duration(report.span.endSeconds)} ` +
        `in ${wallSeconds.toFixed(1)} s)`,
    );
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
function progressReporter(
  args: Args,
  ctx: CommandContext,
  until: number | undefined,
  label: string,
): ((p: SimProgress) => void) | undefined {
  if (args.flag('no-progress')) return undefined;
  const terminal = process.stderr.isTTY === true;
  if (!terminal && !args.flag('progress')) return undefined;
  const fractionOf = (p: SimProgress) =>
    p.done
      ? 1
      : until !== undefined
        ? until > 0
          ? Math.min(1, p.simulatedSeconds / until)
          : 1
        : p.total > 0
          ? p.settled / p.total
          : 1;
  if (!terminal) {
    let shown = -1;
    return (p) => {
      const tenth = Math.floor(fractionOf(p) * 10);
      if (tenth <= shown && !p.done) return;
      if (p.done && shown === 10) return;
      shown = p.done ? 10 : tenth;
      ctx.err(
        `${label}: ${tenth * 10} % (${p.settled} of ${p.total} jobs settled, simulated ` +
          `${duration(p.simulatedSeconds)})`,
      );
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
    const bar =
      `${label === 'sim' ? '' : `${label} `}[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` +
      `${(fraction * 100).toFixed(0).padStart(3)} % ${p.settled}/${p.total} jobs, simulated ` +
      `${duration(p.simulatedSeconds)}`;
    process.stderr.write(`\r${bar}\x1b[K${p.done ? '\n' : ''}`);
  };
}
