import type { Agreement } from '../../domain/agreement.js';
import { InstantQueue } from '../../scheduler/instant-queue.js';

/**
 * Notice before a lease ends (Shirako's leases): every Observed agreement with a
 * reservation window is a lease whose holder hears `noticeSeconds` before the window ends,
 * through its subscriptions (NotificationService.leaseEnding). Watched at start-up and on
 * every change, so an extended lease gets its notice at the new end; each end is noticed
 * once per server run.
 */
export class LeaseNotices {
  private readonly due = new InstantQueue();
  private readonly noticed = new Set<string>();

  constructor(
    private readonly noticeSeconds: number,
    private readonly read: (id: string) => Promise<Agreement | undefined>,
    private readonly notify: (agreement: Agreement, endsAt: Date) => void,
  ) {}

  watch(agreement: Agreement): void {
    const end = leaseEnd(agreement);
    if (end !== undefined) this.watchEnd(agreement.id, end);
  }

  /** Watches the lease `id` ending at `end` (what `watch` keeps of an agreement: start-up collects only this). */
  watchEnd(id: string, end: number): void {
    this.due.push(end - this.noticeSeconds * 1000, id);
  }

  /** Sends the notices that are due; the ids noticed. */
  async noticeDue(now: Date): Promise<string[]> {
    const sent: string[] = [];
    for (const id of new Set(this.due.takeUntil(now.getTime()))) {
      const agreement = await this.read(id);
      const end = agreement?.request.window?.end;
      if (agreement?.state !== 'Observed' || !end || end.getTime() <= now.getTime()) continue;
      // The queue may hold the entry of an earlier end (before an extension): only the current end's time counts.
      if (end.getTime() - this.noticeSeconds * 1000 > now.getTime()) continue;
      const key = `${id} ${end.getTime()}`;
      if (this.noticed.has(key)) continue;
      this.noticed.add(key);
      this.notify(agreement, end);
      sent.push(id);
    }
    return sent;
  }
}

/** When the lease an agreement is ends (milliseconds), if it is one: Observed, with a reservation window. */
export function leaseEnd(agreement: Agreement): number | undefined {
  const end = agreement.request.window?.end;
  return agreement.state === 'Observed' && end ? end.getTime() : undefined;
}
