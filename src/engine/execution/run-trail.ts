import type { AuditLog } from '../ports.js';
import type { HandOver, ResumePoint } from './ports.js';

/**
 * What an agreement's audit trail says about its job's run, read at start-up: the trail is
 * what survives the process (the execution record does not).
 */

/** The last checkpoint taken here, or received from another provider. */
export async function lastCheckpoint(
  audit: AuditLog | undefined,
  id: string,
): Promise<{ point: ResumePoint; received: boolean } | undefined> {
  if (!audit) return undefined;
  const entries = await audit.entries({ subject: { kind: 'agreement', id } });
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (!entry || (entry.action !== 'checkpoint-taken' && entry.action !== 'checkpoint-received')) continue;
    const { reference, interval } = entry.details;
    if (typeof reference !== 'string') continue;
    return {
      point: { reference, interval: typeof interval === 'number' ? interval : 0 },
      received: entry.action === 'checkpoint-received',
    };
  }
  return undefined;
}

/** When the job's nodes were last handed over (its Running phase), if that is the last phase the trail has. */
export async function lastHandOver(audit: AuditLog | undefined, id: string): Promise<HandOver | undefined> {
  if (!audit) return undefined;
  const entries = await audit.entries({ subject: { kind: 'agreement', id } });
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (!entry || typeof entry.details.phase !== 'string') continue;
    const nodes = entry.details.nodes;
    if (entry.details.phase !== 'Running' || !Array.isArray(nodes) || !nodes.every((n) => typeof n === 'string'))
      return undefined;
    return { at: entry.at, nodes: nodes as string[] };
  }
  return undefined;
}
