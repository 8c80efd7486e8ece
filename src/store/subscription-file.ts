import fs from 'node:fs';
import path from 'node:path';
import type { Subscription, SubscriptionStore } from '../engine/execution/index.js';

interface StoredSubscription extends Omit<Subscription, 'createdAt'> {
  createdAt: string;
}

/**
 * Notification subscriptions in one JSON file (`DATA_DIR/subscriptions.json`), kept in
 * memory and written whole on every change: to a temporary name, flushed, then renamed, so
 * the file is always one complete version. They are few (a handful per live agreement).
 */
export class SubscriptionFile implements SubscriptionStore {
  private readonly byId = new Map<string, Subscription>();
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {
    if (!fs.existsSync(file)) return;
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as { subscriptions?: StoredSubscription[] };
    for (const s of stored.subscriptions ?? []) this.byId.set(s.id, { ...s, createdAt: new Date(s.createdAt) });
  }

  async list(agreementId: string): Promise<Subscription[]> {
    return [...this.byId.values()].filter((s) => s.agreementId === agreementId).map((s) => ({ ...s }));
  }

  async add(subscription: Subscription): Promise<void> {
    this.byId.set(subscription.id, { ...subscription });
    await this.save();
  }

  async remove(ids: readonly string[]): Promise<void> {
    const removed = ids.filter((id) => this.byId.delete(id));
    if (removed.length === 0) return;
    await this.save();
  }

  /** Writes run one after another, each with everything changed before it. */
  private save(): Promise<void> {
    const run = this.writing.then(async () => {
      const json = JSON.stringify(
        { subscriptions: [...this.byId.values()].map((s) => ({ ...s, createdAt: s.createdAt.toISOString() })) },
        null,
        2,
      );
      await fs.promises.mkdir(path.dirname(this.file), { recursive: true });
      const temp = `${this.file}.tmp`;
      const handle = await fs.promises.open(temp, 'w');
      try {
        await handle.writeFile(`${json}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(temp, this.file);
    });
    this.writing = run.catch(() => undefined);
    return run;
  }
}
