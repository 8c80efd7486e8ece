/**
 * Runs async work one at a time per key (one negotiation, one agreement), so two requests
 * about the same resource never read the same version and overwrite each other.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      // Drop the entry once nobody queued behind us, so the map does not grow without bound.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
