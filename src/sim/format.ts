import type { NotMigratedReason } from '../engine/migration/index.js';
import type { KindCounts, MigrationSection, SimReport } from './report.js';
import { workloadKinds } from './workload.js';

function stoppedNote(stoppedBy: SimReport['span']['stoppedBy']): string {
  if (stoppedBy === 'until') return ' (stopped by --until)';
  if (stoppedBy === 'drain limit')
    return (
      ' (stopped: jobs still planned long after the last event, ' +
      'kept from running by a node that is never repaired)'
    );
  return '';
}

/** The report for people: one line per figure, then the rejected requests and the violations (up to `limit` each). */
export function formatReport(report: SimReport, options: { limit?: number } = {}): string[] {
  const limit = options.limit ?? 20;
  const r = report;
  const money = (x: number) => `${x.toFixed(2)} ${r.workload.currency}`;
  const lines: string[] = [];
  lines.push(
    `wsag sim: ${r.workload.name}: ${r.workload.jobs} jobs, ${r.workload.failures} failure` +
      `${r.workload.failures === 1 ? '' : 's'} on ${r.cluster.nodes} nodes` +
      `${r.cluster.bufferNodes ? ` (${r.cluster.bufferNodes} buffer)` : ''}; simulated ` +
      `${duration(r.span.endSeconds)} from ${r.workload.start}` +
      stoppedNote(r.span.stoppedBy),
  );
  lines.push('');
  const rows: string[][] = [['requests', 'total', 'accepted', 'rejected', 'completed', 'dropped', 'open']];
  const row = (name: string, c: KindCounts) =>
    [name, c.requests, c.accepted, c.rejected, c.completed, c.dropped, c.open].map(String);
  for (const kind of workloadKinds) if (r.requests[kind].requests > 0) rows.push(row(`  ${kind}`, r.requests[kind]));
  rows.push(row('  all', r.requests.total));
  lines.push(...align(rows));
  lines.push('');
  const a = r.acceptance;
  const u = r.utilisation;
  const figures: Array<[string, string]> = [
    [
      'SLA acceptance',
      `${a.slaAccepted} of ${a.slaRequests} reservation and deadline requests (${pct(a.rate)})` +
        `${a.bestEffortRejected ? `; ${a.bestEffortRejected} best-effort/background refused` : ''}` +
        `${a.refusedQueued ? `; ${a.refusedQueued} refused jobs queued as best-effort instead` : ''}`,
    ],
    [
      'utilisation',
      `${pct(u.busy)} busy (working nodes, overheads included), ${pct(u.useful)} useful work, ${pct(u.spare)} ` +
        `spare nodes held, ${pct(u.failed)} failed`,
    ],
    [
      'work done',
      `${pct(u.slaUseful)} SLA work, ${pct(u.bestEffortUseful)} best-effort and background work, ${pct(u.idle)} ` +
        `idle; the last job completed ${duration(u.tailSeconds)} after the last arrival; up to the last arrival ` +
        `${pct(u.usefulToLastArrival)} useful`,
    ],
    [
      'deadlines',
      `${r.deadlines.accepted} accepted: ${r.deadlines.met} met, ${r.deadlines.missed} missed` +
        `${r.deadlines.open ? `, ${r.deadlines.open} open` : ''}`,
    ],
    [
      'reservations',
      `${r.reservations.accepted} accepted: ${r.reservations.honoured} honoured, ` +
        `${r.reservations.notHonoured} not honoured${r.reservations.open ? `, ${r.reservations.open} open` : ''}`,
    ],
    [
      'SLA violations',
      `${r.violations.total}: ${r.violations.deadlineMissed} deadline missed, ` +
        `${r.violations.reservationNotHonoured} reservation not honoured, ${r.violations.leftInP} left in P` +
        `${r.violations.stillInP ? `; ${r.violations.stillInP} still in P at the stop` : ''}`,
    ],
    [
      'penalties',
      `${money(r.penalties.paid)} paid of ${money(r.penalties.owed)} owed on violations (` +
        `${money(r.penalties.excused)} excused by the guarantee level)`,
    ],
    [
      'checkpoints',
      `${r.checkpoints.taken} taken by ${r.checkpoints.jobs} job${r.checkpoints.jobs === 1 ? '' : 's'}, ` +
        `${(u.checkpointNodeSeconds / 3600).toFixed(1)} node-hours writing them`,
    ],
    ['suspensions', `${r.suspensions.count} (${r.suspensions.jobs} job${r.suspensions.jobs === 1 ? '' : 's'})`],
    [
      'restarts',
      `${r.restarts.count} (${r.restarts.onSpare} on spare nodes) in ${r.restarts.jobs} job` +
        `${r.restarts.jobs === 1 ? '' : 's'}`,
    ],
    [
      'pieces',
      `${r.pieces.jobs} job${r.pieces.jobs === 1 ? '' : 's'} ran in more than one piece; ` +
        `${r.pieces.partialExecution} planned in pieces (partial execution)`,
    ],
    [
      'failures',
      `${r.failures.events} node failure${r.failures.events === 1 ? '' : 's'}, ${r.failures.repairs} ` +
        `repaired; ${r.failures.jobsHit} job${r.failures.jobsHit === 1 ? '' : 's'} hit (` +
        `${r.failures.runningJobsHit} while running)`,
    ],
    [
      'value',
      `${num(r.value.completed)} completed of ${num(r.value.accepted)} accepted (${num(r.value.requested)} requested)`,
    ],
  ];
  if (r.migration) figures.push(...migrationFigures(r.migration, money));
  const checks = r.checks.retiredWithoutCompletion + r.checks.completionClamped + r.checks.lateWithoutProblem;
  if (checks > 0) {
    figures.push([
      'checks',
      `retired without completion ${r.checks.retiredWithoutCompletion}, completion clamped ` +
        `${r.checks.completionClamped}, late without a problem ${r.checks.lateWithoutProblem} (should all be 0)`,
    ]);
  }
  lines.push(...align(figures));
  if (r.rejected.length > 0) {
    lines.push('', `rejected requests (${r.rejected.length}):`);
    lines.push(
      ...align(r.rejected.slice(0, limit).map((x) => [`  ${x.id}`, x.kind, x.level, `at ${x.arrival} s`, x.reason])),
    );
    if (r.rejected.length > limit) lines.push(`  ... ${r.rejected.length - limit} more (--json lists all)`);
  }
  if (r.violated.length > 0) {
    lines.push('', `violations (${r.violated.length}):`);
    lines.push(
      ...align(
        r.violated
          .slice(0, limit)
          .map((v) => [
            `  ${v.id}`,
            v.kind,
            v.level,
            v.type,
            `${v.paid > 0 ? `paid ${money(v.paid)}` : `penalty ${money(v.penalty)} excused`}: ${v.liability}; ` +
              `${v.detail}`,
          ]),
      ),
    );
    if (r.violated.length > limit) lines.push(`  ... ${r.violated.length - limit} more (--json lists all)`);
  }
  if (r.migration && r.migration.moves.length > 0) {
    const moves = r.migration.moves;
    lines.push('', `migrations (${moves.length}):`);
    lines.push(
      ...align(
        moves
          .slice(0, limit)
          .map((m) => [
            `  ${m.id}`,
            m.kind,
            m.level,
            `at ${m.at} s`,
            `to ${m.peer} for ${money(m.price)}`,
            `runs there ${m.start} s to ${m.end} s`,
            m.problematic ? `penalty ${money(m.penalty)} saved` : 'made room for jobs in P',
          ]),
      ),
    );
    if (moves.length > limit) lines.push(`  ... ${moves.length - limit} more (--json lists all)`);
  }
  if (r.jobs) {
    lines.push('', 'jobs:');
    lines.push(
      ...align([
        ['  ID', 'KIND', 'LEVEL', 'STATUS', 'START', 'END', 'CHECKPOINTS', 'PIECES', 'NOTE'],
        ...r.jobs.map((j) => [
          `  ${j.id}`,
          j.kind,
          j.level,
          j.status,
          j.start !== undefined ? String(j.start) : '',
          j.end !== undefined ? String(j.end) : '',
          String(j.checkpoints),
          String(j.pieces),
          j.violation ??
            (j.migratedTo ? `at ${j.migratedTo.peer}; ` : '') +
              (j.met === true ? 'deadline met' : j.honoured === true ? 'honoured' : (j.reason ?? '')),
        ]),
      ]),
    );
  }
  return lines;
}

/** What the Migration Controller did, for the figures block. */
function migrationFigures(m: MigrationSection, money: (x: number) => string): Array<[string, string]> {
  const kept = Object.entries(m.notMigrated) as Array<[NotMigratedReason, number]>;
  const keptCount = kept.reduce((s, [, n]) => s + n, 0);
  return [
    [
      'migration',
      `${plural(m.migrations, 'job')} migrated (${m.problematicMigrated} from P` +
        `${m.migrations > m.problematicMigrated ? `, ${m.migrations - m.problematicMigrated} to make room` : ''}) ` +
        `for ${money(m.price)}; ` +
        `${plural(m.problematicWeighed, 'job')} in P weighed in ${plural(m.runs, 'controller run')}`,
    ],
    [
      'penalties saved',
      `${money(m.penaltiesSaved.owed)} on ${plural(m.penaltiesSaved.jobs, 'job')} (` +
        `${money(m.penaltiesSaved.payable)} of it payable under the liability rules)`,
    ],
    [
      'kept in P',
      keptCount === 0
        ? '0'
        : `${keptCount}: ${kept.map(([reason, n]) => `${n} ${reasonText[reason]}`).join(', ')}; ` +
          `${m.keptThenViolated} of them broke their promise`,
    ],
    [
      'peers',
      m.peers
        .map(
          (p) =>
            `${p.name}: ${plural(p.migrations, 'job')} for ${money(p.price)} (${plural(p.quotes, 'quote')}, ` +
            `${p.refusals} refused)`,
        )
        .join('; '),
    ],
  ];
}

const reasonText: Record<NotMigratedReason, string> = {
  'provider-policy': "kept by the provider's policy",
  'customer-policy': 'forbidden by the SLA',
  'no-compatible-peer': 'no compatible peer',
  bandwidth: 'checkpoint too slow to move',
  'no-penalty': 'no penalty at stake',
  'dearer-than-penalty': 'dearer than the penalty',
  'peers-refused': 'refused by the peers',
  'no-effect': 'no effect',
  failed: 'migration failed',
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function align(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, (cell || '-').length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell || '-' : (cell || '-').padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

export function pct(x: number): string {
  return `${(x * 100).toFixed(1)} %`;
}

function num(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2);
}

/** `5 h 30 min`, `3 d 4 h`, `45 s`. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min ${s % 60} s`;
}
