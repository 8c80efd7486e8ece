/**
 * The scheduler benchmark's workload (bench/scheduler.ts): a 1024-node cluster and a
 * deterministic stream of requests of every kind; `build` admits them until a plan holds
 * the wanted number of jobs. Separate so a profile run can load the same plans.
 */
import type { GuaranteeLevel } from '../src/domain/terms.js';
import type { ClusterDescription, ClusterNode, Instant, JobKind, JobSpec, Segment } from '../src/scheduler/model.js';
import { PlanningManager } from '../src/scheduler/planning-manager.js';
import { defaultSiteTiming } from '../src/scheduler/site.js';
import { prng } from '../workloads/generate.js';

export const T0 = Date.UTC(2026, 10, 23);
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const NODES = 1024;
export const BUFFER = 32;

/** Deterministic random numbers: the workload generator's mulberry32, so every run plans the same workload. */
export const random = prng;

export function clusterDescription(): ClusterDescription {
  const nodes: ClusterNode[] = Array.from({ length: NODES }, (_, i) => ({
    id: `n${String(i).padStart(4, '0')}`,
    memoryGB: i % 4 === 0 ? 64 : 32,
    cpus: 32,
    island: `island-${Math.floor(i / 128)}`,
    ...(i < 512 ? { interconnect: 'InfiniBand' } : {}),
    ...(i >= NODES - BUFFER ? { buffer: true } : {}),
  }));
  return { nodes, timing: defaultSiteTiming, peerStandbyNodes: 256 };
}

/**
 * A request of a realistic mix: mostly small jobs, some wide ones; runtimes from five
 * minutes to four hours; deadlines and reservation windows spread over `spanMs` (how far
 * the plan reaches), so the plan fills from the front and keeps reaching further.
 */
export function request(next: () => number, id: string, now: Instant, spanMs: number): JobSpec {
  const r = next();
  const kind: JobKind = r < 0.55 ? 'Deadline' : r < 0.65 ? 'Reservation' : r < 0.92 ? 'BestEffort' : 'Background';
  const w = next();
  const nodes =
    w < 0.6
      ? 1 + Math.floor(next() * 4)
      : w < 0.9
        ? 8 + Math.floor(next() * 9)
        : w < 0.98
          ? 32 + Math.floor(next() * 33)
          : 128 + Math.floor(next() * 129);
  const runtimeSeconds = Math.round(300 * 48 ** next()); // 5 min to 4 h, log-uniform
  const l = next();
  const level: GuaranteeLevel =
    kind === 'Background'
      ? 'Background'
      : kind === 'BestEffort'
        ? l < 0.5
          ? 'Legacy'
          : 'Standard'
        : l < 0.2
          ? 'Legacy'
          : l < 0.7
            ? 'Standard'
            : l < 0.95
              ? 'Enhanced'
              : 'Full';
  const interconnect = next() < 0.2;
  const spec: JobSpec = {
    id,
    kind,
    level,
    nodes,
    runtimeSeconds,
    coveredOutages: next() < 0.8 ? 0 : 2,
    storageGB: Math.floor(next() * 20),
    requirements: {
      ...(interconnect ? { interconnect: 'InfiniBand' } : {}),
      ...(next() < 0.1 ? { memoryPerNodeGB: 64 } : {}),
    },
    value: 1 + Math.floor(next() * 10),
    arrival: now,
  };
  const start = now + Math.floor(next() * spanMs);
  if (kind === 'Reservation') return { ...spec, window: { start, end: start + runtimeSeconds * 1000 } };
  if (kind === 'Deadline')
    return {
      ...spec,
      earliestStart: start,
      deadline: start + runtimeSeconds * 3000 + Math.floor(next() * spanMs * 0.5) + HOUR,
    };
  return next() < 0.3 ? { ...spec, earliestStart: start } : spec;
}

export interface Built {
  pm: PlanningManager;
  requests: number;
  buildMs: number;
  reachDays: number;
}

/** Admits requests at T0 until `size` jobs are planned; the span the requests aim at grows with the plan. */
export function build(size: number): Built {
  const pm = new PlanningManager(clusterDescription());
  const next = random(size);
  let requests = 0;
  let reach = T0 + DAY;
  const started = performance.now();
  while (pm.size < size) {
    const decision = pm.admit(request(next, `job-${requests}`, T0, reach - T0), T0);
    requests++;
    if (decision.accepted) for (const s of decision.job.segments) reach = Math.max(reach, s.end);
  }
  return { pm, requests, buildMs: performance.now() - started, reachDays: (reach - T0) / DAY };
}

/**
 * Lays out a plan of `size` jobs directly, without searching: each request of the same
 * mix is priced by the scheduler on an empty cluster (checkpoint plan, slot, spare nodes),
 * then put on the nodes that become free first, a little after the last of them frees up,
 * and restored into the plan as the scheduler would have booked it (deadlines and windows
 * move with the job). The result is a plan packed from T0 onwards with the holes list
 * scheduling leaves, reaching weeks ahead, in seconds even at 100k jobs, so the costs
 * measured on it are those of one more request or one failure, not of building.
 */
export function synthesize(size: number): Built {
  const description = clusterDescription();
  const pm = new PlanningManager(description);
  const pricing = new PlanningManager(description); // stays empty
  const next = random(size);
  const frontier = new Float64Array(NODES).fill(T0);
  const keys = new Float64Array(NODES);
  let requests = 0;
  let reach = T0;
  const started = performance.now();
  while (pm.size < size) {
    const spec = request(next, `job-${requests}`, T0, 0);
    requests++;
    const priced = pricing.probe(spec, T0);
    if (!priced.accepted) continue; // e.g. more InfiniBand nodes than one island has
    const slot = priced.job.segments[0] as Segment;
    const count = slot.nodes.length + slot.spare.length;
    const eligible = pm.mm.eligible(spec.requirements, spec.kind === 'BestEffort' || spec.kind === 'Background');
    // The nodes free first (ties: lower index), frontier and index in one sortable number;
    // an InfiniBand job stays in the island of the first of them.
    let n = 0;
    for (const node of eligible) keys[n++] = (frontier[node] as number) * 2048 + node;
    let sorted = keys.subarray(0, n).sort();
    if (spec.requirements.interconnect !== undefined) {
      const island = description.nodes[(sorted[0] as number) % 2048]?.island;
      sorted = sorted.filter((k) => description.nodes[k % 2048]?.island === island);
    }
    const chosen = Array.from(sorted.subarray(0, count), (k) => k % 2048);
    const gap = Math.floor(next() * 20) * MINUTE; // list scheduling leaves holes; these widen some
    let start = T0;
    for (const node of chosen) start = Math.max(start, frontier[node] as number);
    start += gap;
    const shift = start - slot.start;
    const ids = chosen.map((n) => description.nodes[n]?.id as string);
    const moved: JobSpec = {
      ...spec,
      ...(spec.earliestStart !== undefined ? { earliestStart: spec.earliestStart + shift } : {}),
      ...(spec.deadline !== undefined ? { deadline: spec.deadline + shift } : {}),
      ...(spec.window ? { window: { start: spec.window.start + shift, end: spec.window.end + shift } } : {}),
    };
    const segment: Segment = {
      ...slot,
      start,
      end: slot.end + shift,
      nodes: ids.slice(0, slot.nodes.length),
      spare: ids.slice(slot.nodes.length),
    };
    if (!pm.restore({ ...priced.job, spec: moved, segments: [segment] }))
      throw new Error(`synthesized job ${spec.id} does not fit`);
    for (const n of chosen) frontier[n] = segment.end;
    reach = Math.max(reach, segment.end);
  }
  return { pm, requests, buildMs: performance.now() - started, reachDays: (reach - T0) / DAY };
}
