import type { FailureRateSummary, NodeEventSummary } from '../../client/wsag-client.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { printJson, table } from '../output.js';

const actions = ['list', 'fail', 'repair'] as const;

export const nodeCommand: Command = {
  name: 'node',
  summary: "the cluster's nodes: list them; report one failed or repaired (operators)",
  synopsis: 'wsag node (list | fail NODE | repair NODE) [--url URL] [--json]',
  description: [
    'list:   every node with its memory, CPUs, interconnect, whether it is a buffer node and',
    '        whether it is failed; then the failure rate the planner weighs checkpoints against',
    '        (the configured rate, moved by the failures seen since the server started).',
    'fail:   reports NODE failed. The jobs computing on it stop (the outage is recorded), the',
    '        scheduler re-plans: jobs restart from their last checkpoint on spare nodes, move,',
    '        or become problematic; with peers configured the Migration Controller then moves',
    '        problematic jobs it can. Prints what changed; each affected agreement gets an',
    '        audit entry.',
    'repair: reports NODE back in service; the scheduler re-plans (problems may be solved).',
    'These go through the JSON admin API (GET /api/nodes, POST /api/nodes/NODE/fail|repair):',
    'only operators (WSAG_ADMINS) may use them. See docs/operations.md, "Node failures".',
  ],
  optionHelp: [urlHelp, jsonHelp],
  examples: ['  wsag node list', '  wsag node fail n007', '  wsag node repair n007 --json'],
  options: { ...urlOption, ...jsonOption },
  positionals: ['ACTION'],
  optionalPositionals: ['NODE'],
  async run(args, ctx) {
    const [action, node] = args.positionals as [string, string | undefined];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use list, fail or repair`);
    const client = ctx.client(serverUrl(args, ctx.env));
    if (action === 'list') {
      if (node !== undefined) throw new UsageError(`unexpected argument "${node}": node list shows every node`);
      const { nodes, failureRate } = await client.nodeList();
      if (args.flag('json')) {
        printJson(ctx.out, { nodes, ...(failureRate ? { failureRate } : {}) });
        return;
      }
      const rows = nodes.map((n) => [
        n.id,
        n.failed ? 'FAILED' : 'up',
        String(n.memoryGB),
        String(n.cpus),
        n.interconnect ?? '',
        n.island ?? '',
        n.failureGroup ?? '',
        n.buffer ? 'buffer' : '',
      ]);
      for (const line of table(['NODE', 'STATE', 'MEMORY_GB', 'CPUS', 'INTERCONNECT', 'ISLAND', 'GROUP', 'ROLE'], rows))
        ctx.out(line);
      const failed = nodes.filter((n) => n.failed).length;
      ctx.out(`${nodes.length} node${nodes.length === 1 ? '' : 's'}, ${failed} failed`);
      if (failureRate) for (const line of describeRate(failureRate)) ctx.out(line);
      return;
    }
    if (node === undefined) throw new UsageError(`missing NODE: wsag node ${action} NODE (see: wsag node list)`);
    const summary = await client.nodeEvent(node, action === 'fail' ? 'fail' : 'repair');
    if (args.flag('json')) {
      printJson(ctx.out, summary);
      return;
    }
    for (const line of describe(summary)) ctx.out(line);
  },
};

/** The rate checkpoints are weighed against, and where it comes from; per failure group when there are several. */
function describeRate(r: FailureRateSummary): string[] {
  const failures = (n: number) => `${n} failure${n === 1 ? '' : 's'}`;
  const lines = [
    `failure rate the planner uses: ${r.perNodeDay.toFixed(4)} a node and day (${failures(r.failures)} ` +
      `in ${r.nodeDays.toFixed(1)} node-days since the server started, ` +
      `against the configured ${r.configuredPerNodeDay} worth ${r.configuredNodeDays} node-days)`,
  ];
  const groups = r.groups ?? [];
  if (groups.length > 1)
    for (const g of groups)
      lines.push(
        `  group ${g.group}: ${g.perNodeDay.toFixed(4)} a node and day ` +
          `(${failures(g.failures)} on ${g.nodes} node${g.nodes === 1 ? '' : 's'}` +
          (g.events !== undefined && g.events < g.failures
            ? `; ${g.events} event${g.events === 1 ? '' : 's'} of ${(g.meanEventSize ?? 1).toFixed(1)} nodes on average`
            : '') +
          ')',
      );
  const recent = r.recentRepairs;
  if (recent && recent.hours > 0)
    lines.push(
      `within ${recent.hours} h of a repair: ${recent.perNodeDay.toFixed(4)} a node and day ` +
        `(${failures(recent.failures)} in ${recent.nodeDays.toFixed(1)} node-days) against ` +
        `${recent.othersPerNodeDay.toFixed(4)} for the others: ` +
        (recent.chosenLast ? 'nodes repaired recently are chosen last' : 'no different from chance'),
    );
  const repairs = r.repairTimes;
  if (repairs && repairs.alone.repairs + repairs.withOthers.repairs > 0) {
    const kind = (k: { repairs: number; medianHours: number }, what: string) =>
      `${k.repairs} repair${k.repairs === 1 ? '' : 's'} of nodes that failed ${what}` +
      (k.repairs > 0 ? ` (median ${k.medianHours.toFixed(1)} h)` : '');
    lines.push(
      `failed nodes stayed down: ${kind(repairs.alone, 'alone')}, ${kind(repairs.withOthers, 'with others')}; ` +
        'a failed node is kept out until it is likely back',
    );
  }
  return lines;
}

/** What changed, for people: one line per kind of change, then the migrations. */
function describe(s: NodeEventSummary): string[] {
  const lines = [`node ${s.node}: ${s.failed ? 'failed' : 'in service'}`];
  const list = (ids: string[]) => (ids.length ? ids.join(', ') : 'none');
  lines.push(`  moved or restarted on spare nodes: ${list(s.moved)}`);
  if (s.suspended.length) lines.push(`  suspended: ${list(s.suspended)}`);
  if (s.solved.length) lines.push(`  problems solved: ${list(s.solved)}`);
  if (s.problematic.length === 0) lines.push('  problematic: none');
  for (const p of s.problematic) lines.push(`  problematic: ${p.id} (${p.reason})`);
  for (const job of s.migration?.jobs ?? []) {
    lines.push(
      job.migrated
        ? `  migrated: ${job.agreementId} to ${job.peer} (agreement ${job.remoteAgreementId})`
        : `  not migrated: ${job.agreementId}: ${job.detail}`,
    );
  }
  for (const v of s.migration?.violations ?? []) lines.push(`  will be violated: ${v.agreementId}`);
  return lines;
}
