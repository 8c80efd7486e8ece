import type { Agreement, AgreementState } from '../../domain/agreement.js';
import type { AgreementFilter, AgreementRepository, AuditNote } from '../ports.js';

/**
 * One stored change of an agreement: what it was (undefined: it is new), what it is now, and the audit notes stored
 * with it.
 */
export interface AgreementChange {
  before?: Agreement;
  after: Agreement;
  notes: readonly AuditNote[];
}

export type AgreementChangeListener = (change: AgreementChange) => void;

/**
 * An AgreementRepository that tells listeners about every change once it is durable, so
 * the run time and the notifications follow every service that stores agreements (factory,
 * decisions, termination, the scheduler's moves, execution) without each calling them.
 * Listeners are called synchronously after the write and must not throw; their work is
 * their own (queued), so a slow listener never delays the change.
 */
export class ObservedAgreementRepository implements AgreementRepository {
  private readonly listeners: AgreementChangeListener[] = [];

  constructor(
    private readonly inner: AgreementRepository,
    private readonly onListenerError: (error: unknown) => void = () => {},
  ) {}

  onChange(listener: AgreementChangeListener): void {
    this.listeners.push(listener);
  }

  async insert(agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void): Promise<void> {
    await this.inner.insert(agreement, audit, committed);
    this.tell({ after: agreement, notes: audit ?? [] });
  }

  async update(agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void): Promise<void> {
    // Updates of one agreement are serialised by the engine, so what is read here is what is replaced.
    const before = this.listeners.length > 0 ? await this.inner.get(agreement.id) : undefined;
    await this.inner.update(agreement, audit, committed);
    this.tell({ ...(before ? { before } : {}), after: agreement, notes: audit ?? [] });
  }

  get(id: string): Promise<Agreement | undefined> {
    return this.inner.get(id);
  }

  list(filter?: AgreementFilter): Promise<Agreement[]> {
    return this.inner.list(filter);
  }

  countByState(): Promise<Partial<Record<AgreementState, number>>> {
    return this.inner.countByState();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private tell(change: AgreementChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
