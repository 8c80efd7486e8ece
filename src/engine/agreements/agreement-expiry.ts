import type { Agreement } from '../../domain/agreement.js';
import { endOf } from '../../domain/agreement-end.js';
import { InstantQueue } from '../../scheduler/instant-queue.js';
import type { AgreementService } from './agreement-service.js';

/** States in which wsag:ExpirationTime still ends an agreement. */
const expiringStates = new Set<Agreement['state']>(['Observed', 'Pending']);

/**
 * wsag:ExpirationTime: agreements end at the time their offer gave. Every stored agreement
 * is watched (at start-up, and on each change), so expiry holds across restarts; those
 * due are ended by `expireDue`, which the server's one-second tick calls. The queue may
 * hold stale entries (an agreement terminated or renegotiated before): each is checked
 * against the stored agreement when it falls due.
 */
export class AgreementExpiry {
  private readonly due = new InstantQueue();

  /** `pendingSeconds`: a Pending agreement no operator decided within it is Rejected (fair use, docs/security.md). */
  constructor(
    private readonly agreements: Pick<AgreementService, 'expire'>,
    private readonly pendingSeconds?: number,
  ) {}

  watch(agreement: Agreement): void {
    const at = endOf(agreement, this.pendingSeconds);
    if (at !== undefined && expiringStates.has(agreement.state)) this.due.push(at.getTime(), agreement.id);
  }

  /** Ends the agreements whose expiration time has come; their ids. */
  async expireDue(now: Date): Promise<string[]> {
    const ended: string[] = [];
    for (const id of new Set(this.due.takeUntil(now.getTime()))) {
      if (await this.agreements.expire(id, now, this.pendingSeconds)) ended.push(id);
    }
    return ended;
  }
}
