import type { SeenSignatures } from '../engine/ports.js';

/** Signatures seen, in memory (a server on in-memory repositories; tests). */
export class MemorySeenSignatures implements SeenSignatures {
  private readonly until = new Map<string, number>();

  async firstSeen(digest: string, until: Date, now: Date): Promise<boolean> {
    for (const [seen, expires] of this.until) if (expires < now.getTime()) this.until.delete(seen);
    if (this.until.has(digest)) return false;
    this.until.set(digest, until.getTime());
    return true;
  }
}
