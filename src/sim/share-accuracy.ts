import { ShareExceeded } from '../domain/errors.js';
import { epochAt, type SitePolicy } from '../domain/vo-policy.js';
import { checkShares, nodeSeconds, type UsageItem } from '../domain/vo-shares.js';
import type { ClusterDescription } from '../scheduler/model.js';
import { PlanningManager } from '../scheduler/planning-manager.js';
import { jobSpecOf } from './job-spec.js';
import type { Workload } from './workload.js';

/**
 * Share accuracy of VO usage SLAs (docs/vo-policy.md, "Share accuracy"): the jobs
 * of a multi-VO workload arrive at the planning scheduler, which admits them as it would
 * (capacity, deadlines), then checks the shares of the site's policy as the server does
 * (`enforce`; without it, first come first served). Per VO and epoch it reports what the
 * VO was entitled to (share x capacity), asked for (its jobs' node-seconds) and got (its
 * jobs' planned node-seconds in the epoch), and the epoch accuracy: of what it was entitled
 * to and asked for, min(entitled, asked), the part it got. Burst accuracy, for burst-limit
 * VOs, is the part of the run (sampled each minute) in which the VO held no more than its
 * burst share of the nodes. Jobs run as planned: no failures, no early finishes.
 */
export interface ShareAccuracyReport {
  enforced: boolean;
  epochs: Array<{ start: string; vos: VoEpoch[] }>;
  vos: Array<{
    vo: string;
    limit: string;
    share: number;
    epochAccuracy: number;
    burstAccuracy?: number;
    refusedForShare: number;
    refusedForCapacity: number;
  }>;
  overall: { epochAccuracy: number; utilisation: number; refusedForShare: number; refusedForCapacity: number };
}

export interface VoEpoch {
  vo: string;
  entitledNodeHours: number;
  askedNodeHours: number;
  gotNodeHours: number;
  /** Of min(entitled, asked), the part got; undefined when it asked for nothing. */
  accuracy?: number;
}

export function runShareAccuracy(
  workload: Workload,
  cluster: ClusterDescription,
  policy: SitePolicy,
  enforce: boolean,
): ShareAccuracyReport {
  const pm = new PlanningManager(cluster);
  const nodes = cluster.nodes.length;
  const ms = (seconds: number) => workload.start + Math.round(seconds * 1000);
  const accepted = new Map<string, string>();
  const refused = new Map<string, { share: number; capacity: number }>();
  const asked = new Map<string, number>();
  const count = (vo: string, kind: 'share' | 'capacity') => {
    const r = refused.get(vo) ?? { share: 0, capacity: 0 };
    r[kind]++;
    refused.set(vo, r);
  };
  const itemsOf = (id: string, vo: string): UsageItem[] =>
    (pm.job(id)?.segments ?? []).map((s) => ({
      owner: { vo, user: vo },
      nodes: s.nodes.length,
      start: s.start,
      end: s.end,
    }));
  for (const input of [...workload.jobs].sort((a, b) => a.arrival - b.arrival)) {
    const vo = input.vo;
    if (vo === undefined) continue;
    const t = ms(input.arrival);
    const key = `${vo} ${epochAt(policy, t).start}`;
    asked.set(key, (asked.get(key) ?? 0) + input.nodes * input.estimate);
    const decision = pm.admit(jobSpecOf(input, ms), t);
    if (!decision.accepted) {
      count(vo, 'capacity');
      continue;
    }
    if (enforce) {
      const items = [...accepted].flatMap(([id, owner]) => itemsOf(id, owner));
      try {
        checkShares(policy, nodes, items, itemsOf(input.id, vo), t);
      } catch (error) {
        if (!(error instanceof ShareExceeded)) throw error;
        pm.release(input.id);
        count(vo, 'share');
        continue;
      }
    }
    accepted.set(input.id, vo);
  }
  const items = [...accepted].flatMap(([id, vo]) => itemsOf(id, vo));
  const last = Math.max(workload.start, ...items.map((i) => i.end));
  const epochs: ShareAccuracyReport['epochs'] = [];
  const hours = (seconds: number) => Math.round(seconds / 36) / 100;
  let capacitySeconds = 0;
  let usedSeconds = 0;
  for (let e = epochAt(policy, workload.start); e.start < last; e = epochAt(policy, e.end)) {
    const capacity = (nodes * (e.end - e.start)) / 1000;
    capacitySeconds += capacity;
    const vos = policy.vos.map((v): VoEpoch => {
      const got = items.filter((i) => i.owner.vo === v.name).reduce((sum, i) => sum + nodeSeconds(i, e), 0);
      usedSeconds += got;
      const entitled = v.share * capacity;
      const wanted = asked.get(`${v.name} ${e.start}`) ?? 0;
      const target = Math.min(entitled, wanted);
      return {
        vo: v.name,
        entitledNodeHours: hours(entitled),
        askedNodeHours: hours(wanted),
        gotNodeHours: hours(got),
        ...(target > 0 ? { accuracy: Math.min(got, target) / target } : {}),
      };
    });
    epochs.push({ start: new Date(e.start).toISOString(), vos });
  }
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 1);
  const perVo = policy.vos.map((v) => {
    const accuracies = epochs.flatMap((e) =>
      e.vos.filter((x) => x.vo === v.name && x.accuracy !== undefined).map((x) => x.accuracy as number),
    );
    const r = refused.get(v.name) ?? { share: 0, capacity: 0 };
    return {
      vo: v.name,
      limit: v.limit,
      share: v.share,
      epochAccuracy: mean(accuracies),
      ...(v.burst
        ? {
            burstAccuracy: burstAccuracy(
              items.filter((i) => i.owner.vo === v.name),
              v.burst.share * nodes,
              workload.start,
              last,
            ),
          }
        : {}),
      refusedForShare: r.share,
      refusedForCapacity: r.capacity,
    };
  });
  return {
    enforced: enforce,
    epochs,
    vos: perVo,
    overall: {
      epochAccuracy: mean(epochs.flatMap((e) => e.vos.flatMap((x) => (x.accuracy !== undefined ? [x.accuracy] : [])))),
      utilisation: capacitySeconds > 0 ? usedSeconds / capacitySeconds : 0,
      refusedForShare: perVo.reduce((s, v) => s + v.refusedForShare, 0),
      refusedForCapacity: perVo.reduce((s, v) => s + v.refusedForCapacity, 0),
    },
  };
}

/** The part of the minutes from `from` to `to` in which `items` held no more than `limit` nodes at once. */
function burstAccuracy(items: readonly UsageItem[], limit: number, from: number, to: number): number {
  let within = 0;
  let samples = 0;
  for (let t = from; t < to; t += 60_000) {
    samples++;
    if (items.filter((i) => i.start <= t && i.end > t).reduce((sum, i) => sum + i.nodes, 0) <= limit + 1e-9) within++;
  }
  return samples ? within / samples : 1;
}

export function formatShareAccuracy(withShares: ShareAccuracyReport, without: ShareAccuracyReport): string[] {
  const pct = (x: number | undefined) => (x === undefined ? '-' : `${(x * 100).toFixed(1)} %`);
  const lines = ['VO usage SLAs: share accuracy (docs/vo-policy.md)', ''];
  lines.push(
    'VO        limit       share  epoch accuracy (shares / none)  burst accuracy (shares / none)  refused for share',
  );
  withShares.vos.forEach((v, i) => {
    const w = without.vos[i];
    lines.push(
      `${v.vo.padEnd(9)} ${v.limit.padEnd(11)} ${pct(v.share).padStart(6)}  ` +
        `${pct(v.epochAccuracy).padStart(8)} / ${pct(w?.epochAccuracy).padEnd(20)} ` +
        `${pct(v.burstAccuracy).padStart(8)} / ${pct(w?.burstAccuracy).padEnd(20)} ${v.refusedForShare}`,
    );
  });
  lines.push('');
  lines.push(
    `overall epoch accuracy ${pct(withShares.overall.epochAccuracy)} with shares, ` +
      `${pct(without.overall.epochAccuracy)} without; utilisation ${pct(withShares.overall.utilisation)} / ` +
      `${pct(without.overall.utilisation)}`,
  );
  lines.push(
    'GRUBER (Dumitrescu 2007, Table 6.3): burst accuracy 84-97 %, epoch accuracy 83-99 % (S-PEP 88-90 % and 92-99 %)',
  );
  return lines;
}
