import { chainEntry } from '../engine/audit/index.js';
import type { AuditEntry, AuditLog, AuditRecord, AuditSubject } from '../engine/ports.js';

/**
 * The audit log in an array. Not durable: for tests and throwaway servers, shared by the
 * memory repositories given it. Entries are cloned on the way out, so callers cannot
 * change what is stored.
 */
export class MemoryAuditLog implements AuditLog {
  private readonly stored: AuditEntry[] = [];

  async append(record: AuditRecord): Promise<AuditEntry> {
    const [entry] = this.appendWith([record], () => {});
    return structuredClone(entry as AuditEntry);
  }

  /**
   * Runs `change` (a repository's write) and appends `records` after it: both happen, or
   * neither. The entries are built before anything changes, and nothing here awaits.
   */
  appendWith(records: readonly AuditRecord[], change: () => void): AuditEntry[] {
    const entries: AuditEntry[] = [];
    let previous = this.stored[this.stored.length - 1];
    for (const record of records) {
      previous = chainEntry(record, previous).entry;
      entries.push(previous);
    }
    change();
    this.stored.push(...entries);
    return entries.map((e) => structuredClone(e));
  }

  async entries(filter: { subject?: AuditSubject; after?: number; limit?: number } = {}): Promise<AuditEntry[]> {
    const { subject, after = 0, limit = Infinity } = filter;
    return this.stored
      .filter((e) => e.seq > after && (subject === undefined || sameSubject(e.subject, subject)))
      .slice(0, limit)
      .map((e) => structuredClone(e));
  }

  async latest(subject: AuditSubject): Promise<AuditEntry | undefined> {
    for (let i = this.stored.length - 1; i >= 0; i--) {
      const entry = this.stored[i] as AuditEntry;
      if (sameSubject(entry.subject, subject)) return structuredClone(entry);
    }
    return undefined;
  }
}

function sameSubject(a: AuditSubject, b: AuditSubject): boolean {
  return a.kind === b.kind && a.id === b.id;
}
