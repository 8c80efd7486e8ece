import type { Agreement } from '../../domain/agreement.js';
import { isFinal, nextAgreementState } from '../../domain/agreement-state-machine.js';
import type { AgreementService } from '../agreements/agreement-service.js';
import { agreementPages } from '../agreements/live-pages.js';
import { systemActor } from '../audit/audit-notes.js';
import type { PeersConfig } from './peers.js';
import type { AgreementRepository, Clock } from '../ports.js';
import type { PeerProviders } from './ports.js';

export interface MigratedJobsDeps {
  repository: AgreementRepository;
  agreements: AgreementService;
  peers: PeersConfig;
  providers: PeerProviders;
  clock: Clock;
  onProblem?(message: string, details: { agreementId?: string; error?: unknown }): void;
}

/**
 * Follows jobs that moved to a peer (Agreement.migratedTo): the local agreement stays
 * Observed while the peer serves the job, and once the peer's agreement is over (Complete,
 * Terminated) the local one completes with the guarantee term states the peer judged (by
 * term name; terms the peer does not name keep theirs). A peer that cannot be asked is
 * asked again next time.
 */
export class MigratedJobs {
  private checking: Promise<string[]> | undefined;

  constructor(private readonly deps: MigratedJobsDeps) {}

  /**
   * Asks the peers about every migrated job still Observed here; returns the agreements completed. One check at a time.
   */
  check(): Promise<string[]> {
    this.checking ??= this.once().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async once(): Promise<string[]> {
    const { providers } = this.deps;
    if (!providers.agreementState) return [];
    const completed: string[] = [];
    // Page by page and without documents: every Observed agreement read whole at once, every
    // 30 s, held about 500 MB at 100,000 live ones (live-pages.ts).
    for await (const page of agreementPages(this.deps.repository, { state: 'Observed', withoutDocument: true })) {
      for (const agreement of page) {
        if (agreement.migratedTo && (await this.follow(agreement))) completed.push(agreement.id);
      }
    }
    return completed;
  }

  private async follow(agreement: Agreement): Promise<boolean> {
    const migration = agreement.migratedTo as NonNullable<Agreement['migratedTo']>;
    const peer = this.deps.peers.peers.find((p) => p.name === migration.peer);
    if (!peer || !this.deps.providers.agreementState) return false;
    const remote = { peer: peer.name, agreementId: migration.remoteAgreementId, address: migration.remoteAddress };
    let status: Awaited<ReturnType<NonNullable<typeof this.deps.providers.agreementState>>>;
    try {
      status = await this.deps.providers.agreementState(peer, remote);
    } catch (error) {
      this.deps.onProblem?.(`asking ${peer.name} about the migrated job failed; asked again later`, {
        agreementId: agreement.id,
        error,
      });
      return false;
    }
    if (!isFinal(status.state)) return false;
    const judged = new Map(status.guaranteeTerms.map((g) => [g.termName, g.state]));
    await this.deps.agreements.change(
      agreement.id,
      (a) => ({
        ...a,
        state: nextAgreementState(a.state, 'complete'),
        serviceTerms: a.serviceTerms.map((t) => ({ termName: t.termName, state: 'Completed' })),
        guaranteeTerms: a.guaranteeTerms.map((g) => ({ ...g, state: judged.get(g.termName) ?? g.state })),
        updatedAt: this.deps.clock.now(),
      }),
      {
        actor: systemActor,
        action: 'completed',
        details: {
          migratedTo: migration.peer,
          remoteAgreementId: migration.remoteAgreementId,
          remoteState: status.state,
          remoteGuaranteeTerms: status.guaranteeTerms.map((g) => ({ termName: g.termName, state: g.state })),
        },
      },
    );
    return true;
  }
}
