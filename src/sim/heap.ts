/** A binary min-heap, and the order of the simulator's events in it: time, then rank, then workload order or key. */
export /** A binary min-heap. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.less(a[i] as T, a[parent] as T) >= 0) break;
      [a[i], a[parent]] = [a[parent] as T, a[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l] as T, a[m] as T) < 0) m = l;
        if (r < a.length && this.less(a[r] as T, a[m] as T) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as T, a[i] as T];
        i = m;
      }
    }
    return top;
  }
}

export function compareEvents(
  a: { t: number; rank: number; key?: string; index?: number },
  b: { t: number; rank: number; key?: string; index?: number },
): number {
  if (a.t !== b.t) return a.t - b.t;
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.index !== undefined && b.index !== undefined) return a.index - b.index;
  const ka = a.key ?? '';
  const kb = b.key ?? '';
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
