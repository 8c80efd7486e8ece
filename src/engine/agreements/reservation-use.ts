import type { Agreement } from '../../domain/agreement.js';
import type { Allocation } from '../../domain/allocation.js';
import { mayActOn, type Caller } from '../../domain/identity.js';
import {
  CannotSatisfy,
  InvalidStateTransition,
  InvalidTerms,
  NotAuthorized,
  UnknownResource,
} from '../../domain/errors.js';
import { liveStates } from '../../domain/agreement-state-machine.js';
import type { ServiceRequest } from '../../domain/terms.js';
import { isoTime } from '../../domain/time.js';
import type { AgreementService } from './agreement-service.js';
import { actorOf } from '../audit/audit-notes.js';
import type { AgreementRepository } from '../ports.js';

/**
 * Using a binding reservation (Hovestadt 2006, section 2.3): a later request names the
 * reservation's agreement id (sla:UseReservation); it is accepted once, only inside the
 * reserved window, and runs on the reservation's capacity, so it books nothing new.
 */
export class ReservationUse {
  /** Reservations claimed by a use in progress or done; claiming is synchronous, so two uses never both win. */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly repository: AgreementRepository,
    private readonly agreements: AgreementService,
  ) {}

  /**
   * Start-up: reservations already used stay used (an ended one cannot be used any more, so only live agreements are
   * read).
   */
  /** Start-up: the claims recorded on the live agreements (`live`: already read, else read here). */
  async restore(live?: readonly Agreement[]): Promise<void> {
    for (const agreement of live ?? (await this.repository.list({ state: liveStates }))) {
      if (agreement.usedBy !== undefined) this.claimed.add(agreement.id);
      if (agreement.request.useReservation !== undefined) this.claimed.add(agreement.request.useReservation);
    }
  }

  async claim(reservationId: string, request: ServiceRequest, caller: Caller, now: Date): Promise<Allocation> {
    const reservation = await this.repository.get(reservationId);
    const what = `sla:UseReservation "${reservationId}"`;
    if (!reservation) throw new UnknownResource(`${what}: no such agreement`);
    if (!mayActOn(caller, reservation)) throw new NotAuthorized(`${what}: the reservation belongs to another party`);
    const window = reservation.request.window;
    if (!window || !reservation.allocation)
      throw new InvalidTerms(`${what}: that agreement is not a reservation (it has no reservation window)`);
    if (reservation.state !== 'Observed')
      throw new InvalidStateTransition(`${what}: the reservation is ${reservation.state}, not Observed`);
    if (now < window.start || now >= window.end) {
      throw new CannotSatisfy(
        `${what}: a reservation can be used only inside its window ${isoTime(window.start)} to ` +
          `${isoTime(window.end)}; it is now ${isoTime(now)}`,
      );
    }
    if (request.nodeCount > reservation.allocation.nodes) {
      throw new CannotSatisfy(
        `${what}: the reservation holds ${reservation.allocation.nodes} nodes, ${request.nodeCount} were requested`,
      );
    }
    if (request.window && (request.window.start < now || request.window.end > window.end)) {
      throw new CannotSatisfy(
        `${what}: the requested window must lie between now and the reservation's end ${isoTime(window.end)}`,
      );
    }
    if (request.runtimeSeconds !== undefined && now.getTime() + request.runtimeSeconds * 1000 > window.end.getTime()) {
      throw new CannotSatisfy(
        `${what}: a runtime of ${request.runtimeSeconds} s does not fit before the reservation ends at ` +
          `${isoTime(window.end)}`,
      );
    }
    // Checked and taken without an await in between: concurrent uses cannot both pass.
    if (reservation.usedBy !== undefined || this.claimed.has(reservationId)) {
      throw new InvalidStateTransition(
        `${what}: the reservation has already been used` +
          `${reservation.usedBy ? ` by agreement "${reservation.usedBy}"` : ''}; it can be used once`,
      );
    }
    this.claimed.add(reservationId);
    return { start: now, end: window.end, nodes: request.nodeCount };
  }

  unclaim(reservationId: string): void {
    this.claimed.delete(reservationId);
  }

  async markUsed(reservationId: string, usedBy: string, now: Date, caller: Caller): Promise<void> {
    await this.agreements.change(reservationId, (reservation) => ({ ...reservation, usedBy, updatedAt: now }), {
      actor: actorOf(caller),
      action: 'reservation-used',
      details: { usedBy },
    });
  }
}
