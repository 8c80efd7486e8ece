import { align, duration, pct } from './format.js';
import type { SimReport } from './report.js';

/**
 * One workload run twice, without and with migration to peer providers (`wsag sim
 * --compare-migration`): the two reports, and the figures side by side.
 */
export interface SimComparison {
  format: 'wsag-sim-comparison/1';
  without: SimReport;
  with: SimReport;
}

export function compareReports(without: SimReport, withMigration: SimReport): SimComparison {
  return { format: 'wsag-sim-comparison/1', without, with: withMigration };
}

/** The comparison for people: the run's header, then one row per figure with a column per run. */
export function formatComparison(comparison: SimComparison): string[] {
  const a = comparison.without;
  const b = comparison.with;
  const money = (x: number) => `${x.toFixed(2)} ${a.workload.currency}`;
  const peers = b.options.migration?.peers ?? [];
  const lines = [
    `wsag sim: ${a.workload.name}: ${a.workload.jobs} jobs, ${a.workload.failures} failure` +
      `${a.workload.failures === 1 ? '' : 's'} on ${a.cluster.nodes} nodes` +
      `${a.cluster.bufferNodes ? ` (${a.cluster.bufferNodes} buffer)` : ''}, without and with migration to ` +
      `${peers.length} peer${peers.length === 1 ? '' : 's'} (${peers.join(', ')})`,
    '',
  ];
  const row = (label: string, f: (r: SimReport) => string): string[] => [label, f(a), f(b)];
  const m = (r: SimReport) => r.migration;
  const rows: string[][] = [
    ['figure', 'without migration', 'with migration'],
    row(
      'simulated',
      (r) => `${duration(r.span.endSeconds)}${r.span.stoppedBy === 'end of workload' ? '' : ` (${r.span.stoppedBy})`}`,
    ),
    row('SLA accepted', (r) => `${r.acceptance.slaAccepted} of ${r.acceptance.slaRequests}`),
    row('deadlines met', (r) => `${r.deadlines.met} of ${r.deadlines.accepted}`),
    row('deadlines missed', (r) => String(r.deadlines.missed)),
    row('reservations honoured', (r) => `${r.reservations.honoured} of ${r.reservations.accepted}`),
    row('SLA violations', (r) => String(r.violations.total)),
    row('  left in P', (r) => String(r.violations.leftInP)),
    row('penalties owed', (r) => money(r.penalties.owed)),
    row('penalties paid', (r) => money(r.penalties.paid)),
    row('penalties excused', (r) => money(r.penalties.excused)),
    row('checkpoints taken', (r) => String(r.checkpoints.taken)),
    row('migrations', (r) => String(m(r)?.migrations ?? 0)),
    row('  from P', (r) => String(m(r)?.problematicMigrated ?? 0)),
    row('  jobs in P weighed', (r) => String(m(r)?.problematicWeighed ?? 0)),
    row('prices paid to peers', (r) => money(m(r)?.price ?? 0)),
    row('penalties saved', (r) =>
      m(r) ? `${money(m(r)?.penaltiesSaved.owed ?? 0)} (${money(m(r)?.penaltiesSaved.payable ?? 0)} payable)` : '-',
    ),
    row('penalties paid + prices', (r) => money(r.penalties.paid + (m(r)?.price ?? 0))),
    row('utilisation', (r) => `${pct(r.utilisation.busy)} busy, ${pct(r.utilisation.useful)} useful`),
    row('value completed', (r) => num(r.value.completed)),
  ];
  lines.push(...align(rows));
  return lines;
}

function num(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2);
}
