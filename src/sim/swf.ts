import type { GuaranteeLevel } from '../domain/terms.js';
import { uniformByHash } from './selection.js';
import { WorkloadError } from './input-fields.js';

/**
 * The Standard Workload Format of the Parallel Workloads Archive (docs/scheduler.md, "Real
 * traces"): header comments (`; MaxNodes: 128`), then one job per line, 18 fields, -1 where
 * unknown. Each usable job becomes a request of `wsag sim`'s workload format by the rules
 * below, the same ones for every run with the same seed: the trace says when a job arrives,
 * how many processors it asked for, how long it said it needed and how long it ran; the rules
 * say what it promised.
 */
export interface SwfRules {
  /** Processors per node: a job's nodes are its processors divided by this, rounded up. Default 1. */
  processorsPerNode: number;
  /** Share of jobs that become deadline jobs; default 0.3. */
  deadlineShare: number;
  /** Deadline = arrival + slack x estimate; default 2. */
  deadlineSlack: number;
  /**
   * Share of jobs that become advance reservations, starting `reservationLeadSeconds` after their arrival; default 0.1.
   */
  reservationShare: number;
  reservationLeadSeconds: number;
  /** Levels of the SLA jobs, as shares adding up to 1; default Standard only. */
  levels: Partial<Record<GuaranteeLevel, number>>;
  /**
   * The rest are best-effort, at these levels as shares: Legacy runs outside the checkpointing environment (a
   * failure restarts it from the start), Standard inside it. Default Legacy only.
   */
  bestEffortLevels: Partial<Record<'Legacy' | 'Standard', number>>;
  /** Which job is which is drawn from its number and this seed. */
  seed: number;
}

export const defaultSwfRules: SwfRules = {
  processorsPerNode: 1,
  deadlineShare: 0.3,
  deadlineSlack: 2,
  reservationShare: 0.1,
  reservationLeadSeconds: 3600,
  levels: { Standard: 1 },
  bestEffortLevels: { Legacy: 1 },
  seed: 1,
};

export interface SwfTrace {
  /** The workload as JSON (the format of workloads/*.json), ready for parseWorkload. */
  workload: Record<string, unknown>;
  /** Jobs in the trace, and those left out with why (never ran, no processors, ...). */
  jobs: number;
  skipped: Record<string, number>;
  /** MaxNodes (or MaxProcs / processorsPerNode) of the header, when it names one. */
  maxNodes?: number;
}

export function readSwf(text: string, rules: SwfRules = defaultSwfRules, name = 'swf'): SwfTrace {
  const header = new Map<string, string>();
  const jobs: Array<Record<string, unknown>> = [];
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  let total = 0;
  let first: number | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    if (line.startsWith(';')) {
      const m = /^;\s*([A-Za-z]+)\s*:\s*(.*)$/.exec(line);
      if (m) header.set(m[1] as string, (m[2] as string).trim());
      return;
    }
    const fields = line.split(/\s+/).map(Number);
    if (fields.length !== 18 || fields.some((f) => !Number.isFinite(f)))
      throw new WorkloadError(`line ${i + 1}: a job line has 18 numbers, got "${line.slice(0, 80)}"`);
    total++;
    const [number, submit, , runtime, allocated, , , requested, requestedTime] = fields as number[];
    const processors = (requested as number) > 0 ? (requested as number) : (allocated as number);
    if ((runtime as number) <= 0) return skip('never ran (run time 0 or unknown)');
    if (processors <= 0) return skip('no processor count');
    if ((submit as number) < 0) return skip('no submit time');
    first ??= submit as number;
    const id = `swf-${number}`;
    const estimate = Math.max(
      runtime as number,
      (requestedTime as number) > 0 ? (requestedTime as number) : (runtime as number),
    );
    const arrival = (submit as number) - first;
    const base = { id, arrival, nodes: Math.ceil(processors / rules.processorsPerNode), estimate, runtime };
    const draw = uniformByHash(id, rules.seed);
    if (draw < rules.deadlineShare) {
      jobs.push({
        ...base,
        kind: 'deadline',
        level: levelOf(id, rules.levels, rules.seed + 1),
        deadline: arrival + Math.ceil(rules.deadlineSlack * estimate) + 600,
        value: (base.nodes * estimate) / 3600,
        penalty: (base.nodes * estimate) / 3600,
      });
    } else if (draw < rules.deadlineShare + rules.reservationShare) {
      const start = arrival + rules.reservationLeadSeconds;
      const { estimate: _estimate, ...reservation } = base; // a reservation's window is its estimate
      jobs.push({
        ...reservation,
        kind: 'reservation',
        level: levelOf(id, rules.levels, rules.seed + 1),
        window: { start, end: start + estimate },
        value: (base.nodes * estimate) / 3600,
        penalty: (base.nodes * estimate) / 3600,
      });
    } else {
      const level = levelOf(id, rules.bestEffortLevels, rules.seed + 2);
      jobs.push({ ...base, kind: 'best-effort', level, value: (base.nodes * estimate) / 3600 });
    }
  });
  const maxNodes = Number(
    header.get('MaxNodes') ??
      (header.has('MaxProcs') ? Math.ceil(Number(header.get('MaxProcs')) / rules.processorsPerNode) : NaN),
  );
  const start = Number(header.get('UnixStartTime'));
  return {
    workload: {
      name,
      description:
        `${header.get('Computer') ?? 'an SWF trace'}` +
        `${header.get('Installation') ? ` at ${header.get('Installation')}` : ''}, read by wsag sim's SWF ` +
        `rules (seed ${rules.seed})`,
      ...(Number.isFinite(start) && start > 0 ? { start: new Date((start + (first ?? 0)) * 1000).toISOString() } : {}),
      jobs,
    },
    jobs: total,
    skipped,
    ...(Number.isFinite(maxNodes) && maxNodes > 0 ? { maxNodes } : {}),
  };
}

/** The job's level, drawn from the shares of `levels`. */
function levelOf(id: string, levels: Partial<Record<GuaranteeLevel, number>>, seed: number): GuaranteeLevel {
  const draw = uniformByHash(id, seed);
  let sum = 0;
  for (const [level, share] of Object.entries(levels) as Array<[GuaranteeLevel, number]>) {
    sum += share;
    if (draw < sum) return level;
  }
  return (Object.keys(levels).at(-1) as GuaranteeLevel | undefined) ?? 'Standard';
}

/**
 * Node failures from a CSV file (docs/scheduler.md, "Real traces"): a header line
 * `node,down,up`, then one failure per line, times in seconds from the workload's start,
 * `up` empty when the node is not repaired within the run.
 */
export function readFailureCsv(text: string): Array<{ at: number; node: string; repairAt?: number }> {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines[0]?.replace(/\s/g, '') !== 'node,down,up')
    throw new WorkloadError(`the first line must be the header "node,down,up", got "${lines[0] ?? ''}"`);
  return lines.slice(1).map((line, i) => {
    const [node, down, up, extra] = line.split(',').map((f) => f.trim());
    const at = Number(down);
    const repairAt = up === undefined || up === '' ? undefined : Number(up);
    if (
      !node ||
      extra !== undefined ||
      down === '' ||
      !Number.isFinite(at) ||
      at < 0 ||
      (repairAt !== undefined && !(Number.isFinite(repairAt) && repairAt > at))
    ) {
      throw new WorkloadError(
        `line ${i + 2}: expected node,down,up with down >= 0 and up after down (or empty), got "${line}"`,
      );
    }
    return { at, node, ...(repairAt !== undefined ? { repairAt } : {}) };
  });
}

/**
 * Node failures drawn at `perNodeDay` failures per node and day over `seconds`: each node
 * fails after exponential gaps and is repaired after an exponential time of mean
 * `meanRepairSeconds` (never failing again while out). Seeded: the same arguments give the
 * same failures.
 */
export function generateFailures(
  nodes: readonly string[],
  perNodeDay: number,
  seconds: number,
  seed: number,
  meanRepairSeconds = 7200,
  shape = 1,
): Array<{ at: number; node: string; repairAt: number }> {
  const out: Array<{ at: number; node: string; repairAt: number }> = [];
  if (!(perNodeDay > 0)) return out;
  const meanGap = 86_400 / perNodeDay;
  // Weibull gaps with the same mean: scale = mean / Gamma(1 + 1/shape); shape 1 is the exponential.
  const scale = shape === 1 ? meanGap : meanGap / gamma(1 + 1 / shape);
  for (const node of nodes) {
    let t = 0;
    for (let k = 0; ; k++) {
      t += Math.round((-Math.log(1 - uniformByHash(`${node}/${k}/gap`, seed))) ** (1 / shape) * scale);
      if (t >= seconds) break;
      const repairAt =
        t + Math.max(60, Math.round(-Math.log(1 - uniformByHash(`${node}/${k}/repair`, seed)) * meanRepairSeconds));
      out.push({ at: t, node, repairAt });
      t = repairAt;
    }
  }
  return out.sort((a, b) => a.at - b.at || (a.node < b.node ? -1 : 1));
}

/** The gamma function for x > 0 (Lanczos' approximation, g = 7: about 15 significant digits). */
export function gamma(x: number): number {
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x));
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const y = x - 1;
  let a = c[0] as number;
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += (c[i] as number) / (y + i);
  return Math.sqrt(2 * Math.PI) * t ** (y + 0.5) * Math.exp(-t) * a;
}
