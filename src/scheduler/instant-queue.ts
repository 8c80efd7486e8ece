import type { Instant } from './model.js';

/**
 * Ids keyed by an instant, earliest first (a binary min-heap): what the plan's clock
 * must look at once time reaches an instant, without scanning every job. An id may be
 * queued more than once; whoever takes entries checks they still hold.
 */
export class InstantQueue {
  private readonly keys: number[] = [];
  private readonly ids: string[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(at: Instant, id: string): void {
    const { keys, ids } = this;
    let i = keys.length;
    keys.push(at);
    ids.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((keys[parent] as number) <= at) break;
      keys[i] = keys[parent] as number;
      ids[i] = ids[parent] as string;
      i = parent;
    }
    keys[i] = at;
    ids[i] = id;
  }

  /** Takes every id queued at or before `t`, earliest first (ties in no particular order). */
  takeUntil(t: Instant): string[] {
    const out: string[] = [];
    while (this.keys.length > 0 && (this.keys[0] as number) <= t) out.push(this.pop());
    return out;
  }

  private pop(): string {
    const { keys, ids } = this;
    const top = ids[0] as string;
    const lastKey = keys.pop() as number;
    const lastId = ids.pop() as string;
    const n = keys.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && (keys[right] as number) < (keys[left] as number) ? right : left;
      if ((keys[child] as number) >= lastKey) break;
      keys[i] = keys[child] as number;
      ids[i] = ids[child] as string;
      i = child;
    }
    keys[i] = lastKey;
    ids[i] = lastId;
    return top;
  }
}
