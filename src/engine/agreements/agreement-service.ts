import type { Agreement } from '../../domain/agreement.js';
import { holdsCapacity, nextAgreementState } from '../../domain/agreement-state-machine.js';
import { mayActOn, type Caller } from '../../domain/identity.js';
import { InvalidStateTransition, NotAuthorized, SignatureInvalid, UnknownResource } from '../../domain/errors.js';
import { actorOf, agreementNote, allocationSummary, systemActor } from '../audit/audit-notes.js';
import { KeyedLock } from '../keyed-lock.js';
import { liveAgreementPages } from './live-pages.js';
import { endOf } from '../../domain/agreement-end.js';
import type { PlanningService, RestoreOutcome } from '../planning/planning-service.js';
import type {
  AcceptanceNotifier,
  AgreementFilter,
  AgreementRepository,
  AgreementSignatureVerifier,
  AuditDetails,
  Clock,
} from '../ports.js';

/** Reading, terminating and deciding existing agreements. Updates of one agreement run one at a time. */
export class AgreementService {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly repository: AgreementRepository,
    private readonly plan: PlanningService,
    private readonly clock: Clock,
    private readonly notifier?: AcceptanceNotifier,
    private readonly onNotifyFailure: (agreementId: string, error: unknown) => void = () => {},
  ) {}

  /**
   * Books the capacity of every live agreement back into the plan (start-up). A job that
   * uses a reservation runs on the reservation's capacity and books nothing of its own.
   * Every agreement stored with its plan goes back exactly first; then those without one
   * (stored before the planning scheduler) or whose nodes are taken or gone are placed at
   * their times on other nodes, or wherever the scheduler admits them now; changed
   * allocations are stored by the next `plan.settle()`. `restored` counts the booked ones,
   * `lost` lists the others with the scheduler's reason.
   */
  async restorePlan(): Promise<number> {
    return (await this.restorePlanReport()).restored;
  }

  async restorePlanReport(
    pages: AsyncIterable<readonly Agreement[]> = liveAgreementPages(this.repository),
  ): Promise<{ restored: number; lost: Array<{ id: string; reason: string }> }> {
    const now = this.clock.now();
    const allocationOf = (a: Agreement) => a.allocation as NonNullable<Agreement['allocation']>;
    // Exact plans first, all of them, so a booking placed anew never takes the nodes of one that comes back exactly.
    const rest: Agreement[] = [];
    let restored = 0;
    for await (const page of pages) {
      for (const a of page) {
        if (!a.allocation || !holdsCapacity(a.state) || a.request.useReservation !== undefined) continue;
        if (this.plan.restoreExact(a.id, a.request, allocationOf(a), a.createdAt)) restored++;
        else rest.push(a);
      }
    }
    const lost: Array<{ id: string; reason: string }> = [];
    for (const agreement of rest) {
      const outcome: RestoreOutcome = this.plan.restore(
        agreement.id,
        agreement.request,
        allocationOf(agreement),
        agreement.createdAt,
        now,
      );
      if (outcome.restored === 'lost') lost.push({ id: agreement.id, reason: outcome.reason });
      else restored++;
    }
    return { restored, lost };
  }

  /**
   * Stores the plan's current allocation of an agreement the scheduler moved (the persister
   * of PlanningService.settle). An agreement no longer in the plan, or no longer holding
   * capacity, is left as it is.
   */
  async recordAllocation(id: string): Promise<void> {
    await this.locked(id, async () => {
      const current = await this.repository.get(id);
      if (!current || !holdsCapacity(current.state) || current.request.useReservation !== undefined) return;
      const allocation = this.plan.allocationOf(id, current.allocation);
      if (!allocation || JSON.stringify(allocation) === JSON.stringify(current.allocation)) return;
      const moved = { ...current, allocation, updatedAt: this.clock.now() };
      const details = { from: allocationSummary(current.allocation), to: allocationSummary(allocation) };
      await this.repository.update(moved, [
        agreementNote({ actor: systemActor, action: 'plan-moved', before: current, after: moved, details }),
      ]);
    });
  }

  async get(id: string, caller: Caller): Promise<Agreement> {
    const agreement = await this.repository.get(id);
    if (!agreement) throw new UnknownResource(`no agreement with id "${id}"`);
    assertOwner(agreement, caller);
    return agreement;
  }

  /** The caller's agreements (an operator's: everyone's), a page of them when `page` says so. */
  async list(caller: Caller, page: Omit<AgreementFilter, 'initiator'> = {}): Promise<Agreement[]> {
    return this.repository.list(caller.isAdmin ? page : { ...page, initiator: caller.identity });
  }

  /** Runs `work` while no other update of agreement `id` runs. */
  locked<T>(id: string, work: () => Promise<T>): Promise<T> {
    return this.lock.run(id, work);
  }

  /**
   * Reads, changes and stores one agreement under its lock, with the audit note of the change.
   * `committed` runs as soon as reads see the change (see AgreementRepository.update).
   */
  async change(
    id: string,
    update: (agreement: Agreement) => Agreement,
    audit: { actor: string; action: string; details?: AuditDetails },
    committed?: () => void,
  ): Promise<Agreement> {
    return this.locked(id, async () => {
      const current = await this.repository.get(id);
      if (!current) throw new UnknownResource(`no agreement with id "${id}"`);
      const updated = update(current);
      await this.repository.update(updated, [agreementNote({ ...audit, before: current, after: updated })], committed);
      return updated;
    });
  }

  /**
   * Terminate: the provider stops the service at once, so the agreement passes through
   * ObservedAndTerminating straight to Terminated; its service terms are Completed and
   * its capacity is released. An agreement reads as ended only with its capacity free.
   */
  async terminate(id: string, caller: Caller): Promise<Agreement> {
    return this.change(
      id,
      (agreement) => {
        assertOwner(agreement, caller);
        const terminating = nextAgreementState(agreement.state, 'terminateRequested');
        return {
          ...agreement,
          state: nextAgreementState(terminating, 'terminate'),
          serviceTerms: agreement.serviceTerms.map((t) => ({ termName: t.termName, state: 'Completed' })),
          updatedAt: this.clock.now(),
        };
      },
      { actor: actorOf(caller), action: 'terminated' },
      () => this.plan.release(id),
    );
  }

  /**
   * The agreement's wsag:ExpirationTime has come: an Observed agreement is Complete (its
   * obligations end; its service terms are Completed), a Pending one that no operator
   * decided in time is Rejected, as is one left undecided `pendingSeconds` after it was made
   * (fair use); either way its capacity is released, and the initiator's acceptance
   * endpoint hears of a rejection. False when it had already ended, or its time moved
   * (renegotiation).
   */
  async expire(id: string, now: Date, pendingSeconds?: number): Promise<boolean> {
    let ended: Agreement | undefined;
    await this.locked(id, async () => {
      const current = await this.repository.get(id);
      if (!current || (current.state !== 'Observed' && current.state !== 'Pending')) return;
      const end = endOf(current, pendingSeconds);
      if (!end || end.getTime() > now.getTime()) return;
      const undecided = current.state === 'Pending' && end.getTime() !== current.expiresAt?.getTime();
      const expired: Agreement = {
        ...current,
        state: nextAgreementState(current.state, current.state === 'Observed' ? 'complete' : 'reject'),
        serviceTerms: current.serviceTerms.map((t) => ({ termName: t.termName, state: 'Completed' })),
        updatedAt: now,
      };
      const details: AuditDetails = undecided
        ? { undecidedFor: `${pendingSeconds} s`, decideBy: end.toISOString() }
        : { expirationTime: end.toISOString() };
      await this.repository.update(
        expired,
        [
          agreementNote({
            actor: systemActor,
            action: undecided ? 'undecided-rejected' : 'expired',
            before: current,
            after: expired,
            details,
          }),
        ],
        () => this.plan.release(id),
      );
      ended = expired;
    });
    const rejected = ended as Agreement | undefined;
    if (rejected?.state === 'Rejected' && rejected.acceptanceEpr !== undefined && this.notifier) {
      this.notifier
        .notify(rejected.acceptanceEpr, 'Reject', id)
        .catch((error: unknown) => this.onNotifyFailure(id, error));
    }
    return rejected !== undefined;
  }

  /**
   * The initiator's countersignature: `document` is the stored agreement with the
   * initiator's signature added inside the provider's. The provider's signature must be the
   * one stored (so nothing it covers changed) and the countersigner must be the initiator.
   */
  async countersign(
    id: string,
    document: string,
    caller: Caller,
    verifier: AgreementSignatureVerifier,
  ): Promise<Agreement> {
    return this.change(
      id,
      (agreement) => {
        if (agreement.initiator !== caller.identity)
          throw new NotAuthorized(`only the initiator of agreement "${id}" countersigns it`);
        const now = this.clock.now();
        const stored = verifier.verify(agreement.document, now);
        if (stored.initiator)
          throw new InvalidStateTransition(
            `agreement "${id}" is already countersigned by ${stored.initiator.identity}`,
          );
        const signed = verifier.verify(document, now);
        if (!signed.initiator)
          throw new SignatureInvalid(
            "initiator countersignature: the document carries none (a ds:Signature inside the provider's " +
              'ds:Signature/ds:Object)',
          );
        if (signed.provider.signatureValue !== stored.provider.signatureValue) {
          throw new SignatureInvalid(
            `provider signature: it is not the one on agreement "${id}": countersign the agreement document ` +
              `exactly as the provider signed it`,
          );
        }
        if (signed.initiator.identity !== agreement.initiator) {
          throw new NotAuthorized(
            `the countersignature is by ${signed.initiator.identity}; agreement "${id}" was initiated by ` +
              `${agreement.initiator}`,
          );
        }
        return { ...agreement, document, updatedAt: now };
      },
      { actor: actorOf(caller), action: 'countersigned' },
    );
  }

  /**
   * The provider's decision on a pending agreement (an operator's; AgreementAcceptance):
   * Accept makes it Observed, Reject makes it Rejected and frees its capacity. The
   * initiator's AgreementAcceptance endpoint, if it gave one, is told afterwards.
   */
  async decide(id: string, decision: 'Accept' | 'Reject', caller: Caller): Promise<Agreement> {
    if (!caller.isAdmin) throw new NotAuthorized('only an operator (admin role) decides on pending agreements');
    const updated = await this.change(
      id,
      (agreement) => ({
        ...agreement,
        state: nextAgreementState(agreement.state, decision === 'Accept' ? 'accept' : 'reject'),
        updatedAt: this.clock.now(),
      }),
      { actor: actorOf(caller), action: decision === 'Accept' ? 'accepted' : 'rejected' },
      () => {
        if (decision === 'Reject') this.plan.release(id);
      },
    );
    if (updated.acceptanceEpr !== undefined && this.notifier) {
      // The decision stands whether or not the initiator can be reached.
      this.notifier
        .notify(updated.acceptanceEpr, decision, id)
        .catch((error: unknown) => this.onNotifyFailure(id, error));
    }
    return updated;
  }
}

function assertOwner(agreement: Agreement, caller: Caller): void {
  if (!mayActOn(caller, agreement)) {
    throw new NotAuthorized(`agreement "${agreement.id}" belongs to another party`);
  }
}
