import type { Agreement } from '../domain/agreement.js';
import { holdsCapacity, nextAgreementState } from '../domain/agreement-state-machine.js';
import type { Caller } from '../domain/identity.js';
import { NotAuthorized, UnknownResource } from '../domain/errors.js';
import type { CapacityPlan } from './capacity-plan.js';
import type { AgreementRepository, Clock } from './ports.js';

/** Reading and terminating existing agreements. */
export class AgreementService {
  constructor(
    private readonly repository: AgreementRepository,
    private readonly plan: CapacityPlan,
    private readonly clock: Clock,
  ) {}

  /** Books the capacity of every live agreement back into the plan (start-up). */
  async restorePlan(): Promise<number> {
    let restored = 0;
    for (const agreement of await this.repository.list()) {
      if (agreement.allocation && holdsCapacity(agreement.state)) {
        this.plan.restore(agreement.id, agreement.allocation);
        restored++;
      }
    }
    return restored;
  }

  async get(id: string, caller: Caller): Promise<Agreement> {
    const agreement = await this.repository.get(id);
    if (!agreement) throw new UnknownResource(`no agreement with id "${id}"`);
    if (!caller.isAdmin && agreement.initiator !== caller.identity) {
      throw new NotAuthorized(`agreement "${id}" belongs to another party`);
    }
    return agreement;
  }

  async list(caller: Caller): Promise<Agreement[]> {
    return this.repository.list(caller.isAdmin ? {} : { initiator: caller.identity });
  }

  /**
   * Terminate: the provider stops the service at once, so the agreement passes through
   * ObservedAndTerminating straight to Terminated; its service terms are Completed and
   * its capacity is released.
   */
  async terminate(id: string, caller: Caller): Promise<Agreement> {
    const agreement = await this.get(id, caller);
    const terminating = nextAgreementState(agreement.state, 'terminateRequested');
    const state = nextAgreementState(terminating, 'terminate');
    const updated: Agreement = {
      ...agreement,
      state,
      serviceTerms: agreement.serviceTerms.map((t) => ({ termName: t.termName, state: 'Completed' })),
      updatedAt: this.clock.now(),
    };
    await this.repository.update(updated);
    this.plan.release(id);
    return updated;
  }
}
