import { formatCharge, type Charge } from './compensation.js';
import { describeMs } from './duration.js';
import type { ExecutionRecord } from './execution.js';
import type { GuaranteeEvaluation } from './guarantee-evaluation.js';
import type { Money } from './negotiation.js';
import type { GuaranteeTerm, KpiTarget, ServiceRequest } from './terms.js';
import { isoTime } from './time.js';

/**
 * The post-runtime analysis of one agreement (Hovestadt 2006, section 3.3.4: "determine if all
 * specifications of the SLA have been fulfilled. In case of resource outages, it has to be
 * checked if the resource management system has reacted as agreed"): what was promised,
 * what happened, each guarantee's state and what is owed. A JSON-able report and the same
 * for people.
 */
export interface PostRuntimeInput {
  agreementId: string;
  /** The agreed service terms. */
  request: ServiceRequest;
  guaranteeTerms: readonly GuaranteeTerm[];
  record: ExecutionRecord;
  /** The final evaluation of each guarantee term. */
  evaluations: readonly GuaranteeEvaluation[];
  /** The plan the job was executed by, when known. */
  plan?: { start: Date; end: Date; nodes: readonly string[]; checkpoints: number };
  generatedAt: Date;
}

export interface PostRuntimeReport {
  format: 'wsag-post-runtime-report/1';
  agreementId: string;
  jobId: string;
  generatedAt: string;
  promised: {
    guaranteeLevel: string;
    nodes: number;
    runtimeSeconds?: number;
    earliestStart?: string;
    deadline?: string;
    window?: { start: string; end: string };
    coveredOutages: number;
    checkpointsPerHour?: number;
    plan?: { start: string; end: string; nodes: string[]; checkpoints: number };
    objectives: Array<{ term: string; kpi: string; objective: string }>;
  };
  happened: {
    outcome: 'completed' | 'failed' | 'running' | 'not started';
    started?: string;
    completed?: string;
    failure?: { at: string; cause: string; reason: string };
    phases: Array<{ phase: string; start: string; end?: string; nodes: string[] }>;
    checkpoints: {
      planned?: number;
      taken: number;
      missed: number;
      list: Array<{ at: string; interval: number; reference: string }>;
    };
    missedCheckpoints: Array<{ at: string; interval: number; reason: string }>;
    outages: Array<{ at: string; node: string }>;
    restarts: Array<{ at: string; nodes: string[]; fromInterval: number; cause: string }>;
    suspensions: Array<{ at: string; reason: string; resumedAt?: string }>;
  };
  guarantees: Array<{
    term: string;
    kpi: string;
    state: string;
    explanation: string;
    penalty?: Charge;
    excusedPenalty?: Charge;
    reward?: Charge;
    liability?: string;
  }>;
  /** Sums per currency. */
  totals: { penalties: Money[]; excused: Money[]; rewards: Money[] };
}

export function postRuntimeReport(input: PostRuntimeInput): { report: PostRuntimeReport; text: string } {
  const report = buildReport(input);
  return { report, text: reportText(report) };
}

/**
 * An operator's correction of a verdict the server got wrong (src/domain/verdict-correction.ts):
 * the term, from Violated to Fulfilled, by whom, when and why, and the penalty withdrawn.
 */
export interface VerdictCorrection {
  term: string;
  from: 'Violated';
  to: 'Fulfilled';
  by: string;
  at: string;
  reason: string;
  withdrawnPenalty?: Charge;
}

/**
 * What a stored report adds: the server's notes (where the job went, why terms were not judged) and operators'
 * corrections.
 */
export interface ReportAdditions {
  notes?: string[];
  corrections?: VerdictCorrection[];
}

/** The report for people: every section, then the corrections made since and the server's notes. */
export function reportText(r: PostRuntimeReport & ReportAdditions): string {
  const corrections = (r.corrections ?? []).map(
    (c) =>
      `Corrected: ${c.term} Violated to Fulfilled by ${c.by} at ${c.at}` +
      `${c.withdrawnPenalty ? `, penalty of ${formatCharge(c.withdrawnPenalty)} withdrawn` : ''}: ${c.reason}`,
  );
  const extra = [...corrections, ...(r.notes ?? [])];
  const text = renderText(r);
  return extra.length ? `${text}\n${extra.join('\n')}\n` : text;
}

export function describeObjective(target: KpiTarget): string {
  switch (target.kind) {
    case 'CompletedBy':
      return `completed by ${isoTime(target.at)}`;
    case 'StartBy':
      return `started by ${isoTime(target.at)}`;
    case 'NodesAvailable':
      return `${target.nodes} node(s) available throughout`;
    case 'MaxCheckpointInterval':
      return `at most ${target.interval} between checkpoints`;
    case 'Custom':
      return `custom KPI ${target.kpiName}`;
  }
}

function buildReport({
  agreementId,
  request,
  guaranteeTerms,
  record,
  evaluations,
  plan,
  generatedAt,
}: PostRuntimeInput): PostRuntimeReport {
  const iso = (d: Date) => isoTime(d);
  const promised: PostRuntimeReport['promised'] = {
    guaranteeLevel: request.guaranteeLevel,
    nodes: request.nodeCount,
    coveredOutages: request.maxCoveredOutages,
    objectives: guaranteeTerms.map((t) => ({
      term: t.name,
      kpi: t.target.kind,
      objective: describeObjective(t.target),
    })),
  };
  if (request.runtimeSeconds !== undefined) promised.runtimeSeconds = request.runtimeSeconds;
  if (request.earliestStart) promised.earliestStart = iso(request.earliestStart);
  if (request.deadline) promised.deadline = iso(request.deadline);
  if (request.window) promised.window = { start: iso(request.window.start), end: iso(request.window.end) };
  if (request.checkpointFrequency !== undefined) promised.checkpointsPerHour = request.checkpointFrequency;
  if (plan)
    promised.plan = {
      start: iso(plan.start),
      end: iso(plan.end),
      nodes: [...plan.nodes],
      checkpoints: plan.checkpoints,
    };

  const happened: PostRuntimeReport['happened'] = {
    outcome: record.completedAt
      ? 'completed'
      : record.failure
        ? 'failed'
        : record.startedAt
          ? 'running'
          : 'not started',
    phases: record.phases.map((p) => ({
      phase: p.phase,
      start: iso(p.start),
      ...(p.end ? { end: iso(p.end) } : {}),
      nodes: [...p.nodes],
    })),
    checkpoints: {
      ...(plan ? { planned: plan.checkpoints } : {}),
      taken: record.checkpoints.length,
      missed: record.missedCheckpoints.length,
      list: record.checkpoints.map((c) => ({ at: iso(c.at), interval: c.interval, reference: c.reference })),
    },
    missedCheckpoints: record.missedCheckpoints.map((m) => ({ at: iso(m.at), interval: m.interval, reason: m.reason })),
    outages: record.outages.map((o) => ({ at: iso(o.at), node: o.node })),
    restarts: record.restarts.map((r) => ({
      at: iso(r.at),
      nodes: [...r.nodes],
      fromInterval: r.fromInterval,
      cause: r.cause,
    })),
    suspensions: record.suspensions.map((s) => ({
      at: iso(s.at),
      reason: s.reason,
      ...(s.resumedAt ? { resumedAt: iso(s.resumedAt) } : {}),
    })),
  };
  if (record.startedAt) happened.started = iso(record.startedAt);
  if (record.completedAt) happened.completed = iso(record.completedAt);
  if (record.failure)
    happened.failure = { at: iso(record.failure.at), cause: record.failure.cause, reason: record.failure.reason };

  const guarantees = evaluations.map((e) => ({
    term: e.term,
    kpi: e.kpi,
    state: e.state,
    explanation: e.explanation,
    ...(e.penalty ? { penalty: e.penalty } : {}),
    ...(e.excusedPenalty ? { excusedPenalty: e.excusedPenalty } : {}),
    ...(e.reward ? { reward: e.reward } : {}),
    ...(e.liability ? { liability: e.liability } : {}),
  }));
  return {
    format: 'wsag-post-runtime-report/1',
    agreementId,
    jobId: record.jobId,
    generatedAt: iso(generatedAt),
    promised,
    happened,
    guarantees,
    totals: {
      penalties: sumByCurrency(evaluations.map((e) => e.penalty)),
      excused: sumByCurrency(evaluations.map((e) => e.excusedPenalty)),
      rewards: sumByCurrency(evaluations.map((e) => e.reward)),
    },
  };
}

/** Every line counts in its own currency (a Charge's total holds its first currency only). */
function sumByCurrency(charges: ReadonlyArray<Charge | undefined>): Money[] {
  const sums = new Map<string, number>();
  for (const charge of charges)
    for (const line of charge?.lines ?? []) sums.set(line.currency, (sums.get(line.currency) ?? 0) + line.amount);
  return [...sums].map(([currency, amount]) => ({ amount: Math.round(amount * 100) / 100, currency }));
}

function renderText(r: PostRuntimeReport): string {
  const out: string[] = [];
  const p = r.promised;
  const h = r.happened;
  out.push(`Post-runtime report for agreement ${r.agreementId} (job ${r.jobId}), ${r.generatedAt}`);
  out.push('');
  out.push('Promised');
  out.push(
    `  ${p.guaranteeLevel} service on ${p.nodes} node(s)` +
      `${p.runtimeSeconds !== undefined ? `, runtime estimate ${describeMs(p.runtimeSeconds * 1000)}` : ''}, ` +
      `${p.coveredOutages} covered outage(s)`,
  );
  if (p.window) out.push(`  window ${p.window.start} to ${p.window.end}`);
  if (p.earliestStart) out.push(`  earliest start ${p.earliestStart}`);
  if (p.deadline) out.push(`  deadline ${p.deadline}`);
  if (p.plan)
    out.push(
      `  planned ${p.plan.start} to ${p.plan.end} on ${p.plan.nodes.join(', ')} with ${p.plan.checkpoints} ` +
        `checkpoint(s)`,
    );
  for (const o of p.objectives) out.push(`  ${o.term}: ${o.objective}`);
  out.push('');
  out.push('What happened');
  out.push(
    `  outcome: ${h.outcome}${h.started ? `; started ${h.started}` : ''}` +
      `${h.completed ? `; completed ${h.completed}` : ''}`,
  );
  if (h.failure) out.push(`  ended without completing at ${h.failure.at} (${h.failure.cause}: ${h.failure.reason})`);
  for (const ph of h.phases)
    out.push(
      `  ${ph.phase.padEnd(11)} ${ph.start} to ${ph.end ?? '(open)'}` +
        `${ph.nodes.length ? ` on ${ph.nodes.join(', ')}` : ''}`,
    );
  out.push(
    `  checkpoints: ${h.checkpoints.planned !== undefined ? `${h.checkpoints.planned} planned, ` : ''}` +
      `${h.checkpoints.taken} taken, ${h.checkpoints.missed} missed`,
  );
  for (const c of h.checkpoints.list) out.push(`    interval ${c.interval} secured at ${c.at} (${c.reference})`);
  for (const m of h.missedCheckpoints) out.push(`    MISSED interval ${m.interval} at ${m.at}: ${m.reason}`);
  for (const o of h.outages) out.push(`  outage: node ${o.node} at ${o.at}`);
  for (const rs of h.restarts)
    out.push(`  restart (${rs.cause}) at ${rs.at} on ${rs.nodes.join(', ')} from interval ${rs.fromInterval}`);
  for (const s of h.suspensions)
    out.push(`  suspended at ${s.at} (${s.reason})${s.resumedAt ? `, resumed ${s.resumedAt}` : ''}`);
  out.push('');
  out.push('Guarantees');
  for (const g of r.guarantees) {
    out.push(`  ${g.term} (${g.kpi}): ${g.state} - ${g.explanation}`);
    if (g.liability) out.push(`    ${g.liability}`);
    if (g.penalty) out.push(`    penalty owed: ${chargeText(g.penalty)}`);
    if (g.excusedPenalty) out.push(`    penalty excused: ${chargeText(g.excusedPenalty)}`);
    if (g.reward) out.push(`    reward: ${chargeText(g.reward)}`);
  }
  out.push('');
  const money = (list: Money[]) => (list.length ? list.map(formatCharge).join(', ') : 'none');
  out.push(
    `Totals: penalties ${money(r.totals.penalties)}; excused ${money(r.totals.excused)}; rewards ` +
      `${money(r.totals.rewards)}`,
  );
  return `${out.join('\n')}\n`;
}

function chargeText(charge: Charge): string {
  const lines = charge.lines.map(
    (l) =>
      `${l.units} x ${l.rate} per ${l.per}${l.capped ? ', capped' : ''} = ` +
      `${formatCharge({ amount: l.amount, currency: l.currency })}`,
  );
  return `${formatCharge(charge)} (${lines.join('; ')})`;
}
