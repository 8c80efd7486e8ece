import type { Agreement } from '../../domain/agreement.js';
import type { PostRuntimeInput } from '../../domain/post-runtime-report.js';
import type { PlannedJob } from '../../scheduler/model.js';

/** The plan as the post-runtime report states it. */
export function planSummary(job: PlannedJob): NonNullable<PostRuntimeInput['plan']> {
  const first = job.segments[0];
  const last = job.segments[job.segments.length - 1];
  return {
    start: new Date(first?.start ?? 0),
    end: new Date(last?.end ?? 0),
    nodes: [...new Set(job.segments.flatMap((s) => s.nodes))],
    checkpoints: job.checkpoints.count,
  };
}

/** A migration record as stored in audit details (JSON: times as ISO strings). */
export function migrationJson(m: NonNullable<Agreement['migratedTo']>) {
  return {
    peer: m.peer,
    remoteAgreementId: m.remoteAgreementId,
    remoteAddress: m.remoteAddress,
    at: m.at.toISOString(),
    price: { ...m.price },
    ...(m.penalty ? { penalty: { ...m.penalty } } : {}),
  };
}
