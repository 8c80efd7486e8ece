import type { Agreement } from '../../domain/agreement.js';
import { auditEntryHash, genesisHash } from './audit-chain.js';
import { agreementDigest, systemActor } from './audit-notes.js';
import { agreementPages } from '../agreements/live-pages.js';
import type { AgreementRepository, AuditEntry, AuditLog, AuditSubject } from '../ports.js';

/** The first link of the chain that does not hold, and what is wrong with it. */
export interface BrokenLink {
  seq: number;
  reason: string;
}

export interface ChainReport {
  /** How many entries the log holds. */
  entries: number;
  /** The hash of the last entry when the whole chain holds: note it somewhere else to detect a truncated log later. */
  head?: string;
  firstBroken?: BrokenLink;
}

export interface AgreementProblem {
  agreementId: string;
  problem: string;
}

export interface AuditReport {
  chain: ChainReport;
  /** Stored agreements checked. */
  agreements: number;
  problems: AgreementProblem[];
  /**
   * Agreements stored without a signature (made while signing was off): counted, not problems; their digests are
   * checked like any.
   */
  unsigned: number;
  /** False when no signature check was given (AuditServiceDeps.checkSignatures). */
  signaturesChecked: boolean;
}

/** What a signature check says of an agreement stored without any signature. */
export const unsignedAgreement = Symbol('unsigned');

/**
 * A problem with an agreement's signatures, or undefined when they hold. `signedAt` is when
 * the stored document was written, by its audit entries: the time its certificates must
 * have been valid at.
 */
export type SignatureCheck = (agreement: Agreement, signedAt: Date) => SignatureVerdict | Promise<SignatureVerdict>;
/** A problem, undefined when the signatures hold, or `unsignedAgreement` when there are none. */
export type SignatureVerdict = string | undefined | typeof unsignedAgreement;

export interface AuditServiceDeps {
  audit: AuditLog;
  agreements: AgreementRepository;
  checkSignatures?: SignatureCheck;
}

/** Entries read per call while walking the chain, so a long log is never all in memory. */
const pageSize = 1000;

/**
 * Proves what happened (docs/security.md, "Audit trail"): walks the hash chain of the audit
 * log, lists one agreement's history, and checks each stored agreement against the
 * document digest its last audit entry recorded (and, if given a check, its signatures).
 */
export class AuditService {
  constructor(private readonly deps: AuditServiceDeps) {}

  /**
   * Recomputes every entry's hash and checks each links to the one before, in seq order
   * from 1, and reports the first link that does not hold: a changed row shows as a hash
   * mismatch in that row, a removed one as a seq gap, a row rewritten with a fresh hash as
   * a prevHash mismatch in the row after it.
   */
  async verifyChain(): Promise<ChainReport> {
    let entries = 0;
    let lastSeq = 0;
    let prevHash = genesisHash;
    let firstBroken: BrokenLink | undefined;
    for (;;) {
      const page = await this.deps.audit.entries({ after: lastSeq, limit: pageSize });
      for (const entry of page) {
        entries++;
        lastSeq = Math.max(lastSeq, entry.seq);
        if (firstBroken) continue; // only counting from here
        const reason = brokenLink(entry, entries, prevHash);
        if (reason !== undefined) firstBroken = { seq: entries, reason };
        prevHash = entry.hash;
      }
      if (page.length < pageSize) break;
    }
    if (firstBroken) return { entries, firstBroken };
    return entries === 0 ? { entries } : { entries, head: prevHash };
  }

  /** The agreement's audit entries, oldest first. */
  async history(agreementId: string): Promise<AuditEntry[]> {
    return this.deps.audit.entries({ subject: agreementSubject(agreementId) });
  }

  /** The negotiation's audit entries, oldest first. */
  async negotiationHistory(negotiationId: string): Promise<AuditEntry[]> {
    return this.deps.audit.entries({ subject: { kind: 'negotiation', id: negotiationId } });
  }

  /**
   * Each stored agreement against its last audit entry: the document's sha256 and the
   * state must be what that entry recorded, and the signatures must hold if a check is given.
   */
  async checkAgreements(): Promise<{ agreements: number; problems: AgreementProblem[]; unsigned: number }> {
    const problems: AgreementProblem[] = [];
    let agreements = 0;
    let unsigned = 0;
    // Page by page: 100,000 agreements with their documents read at once took over 500 MB.
    for await (const page of agreementPages(this.deps.agreements)) {
      agreements += page.length;
      for (const agreement of page)
        if ((await this.checkAgreement(agreement, problems)) === unsignedAgreement) unsigned++;
    }
    return { agreements, problems, unsigned };
  }

  /**
   * An agreement stored unsigned is no problem: its document digest, checked above against
   * the audit entry written with it, shows a signature was not stripped later.
   */
  private async checkAgreement(agreement: Agreement, problems: AgreementProblem[]): Promise<SignatureVerdict> {
    const report = (problem: string) => problems.push({ agreementId: agreement.id, problem });
    const last = await this.deps.audit.latest(agreementSubject(agreement.id));
    if (!last) {
      report('no audit entry records it');
    } else {
      if (last.details.documentSha256 !== agreementDigest(agreement)) {
        report(
          `its document does not match the documentSha256 of its last audit entry (row ${last.seq}): it was ` +
            `changed outside the server`,
        );
      }
      if (last.details.state !== agreement.state) {
        report(
          `its state ${agreement.state} differs from the state ${String(last.details.state)} of its last ` +
            `audit entry (row ${last.seq})`,
        );
      }
    }
    if (!this.deps.checkSignatures) return undefined;
    const signatures = await this.deps.checkSignatures(agreement, await this.documentWrittenAt(agreement));
    if (typeof signatures === 'string') report(`signature: ${signatures}`);
    return signatures;
  }

  /** The chain and every stored agreement. */
  async verify(): Promise<AuditReport> {
    const chain = await this.verifyChain();
    const { agreements, problems, unsigned } = await this.checkAgreements();
    return { chain, agreements, problems, unsigned, signaturesChecked: this.deps.checkSignatures !== undefined };
  }

  /**
   * Start-up: agreements stored before the audit trail existed (databases older than
   * migration 5) get an `adopted` entry pinning their document as found; returns how many.
   */
  async recordUnaudited(now: Date, candidates?: readonly string[]): Promise<number> {
    let adopted = 0;
    // A store that can say which agreements have no entry (SqliteStore.agreementsWithoutAudit) saves reading every
    // agreement.
    const agreements =
      candidates === undefined
        ? await this.deps.agreements.list()
        : (await Promise.all(candidates.map((id) => this.deps.agreements.get(id)))).filter(
            (a): a is Agreement => a !== undefined,
          );
    for (const agreement of agreements) {
      const subject = agreementSubject(agreement.id);
      if (await this.deps.audit.latest(subject)) continue;
      await this.deps.audit.append({
        at: now,
        actor: systemActor,
        subject,
        action: 'adopted',
        details: {
          state: agreement.state,
          documentSha256: agreementDigest(agreement),
          note: 'stored before the audit trail began',
        },
      });
      adopted++;
    }
    return adopted;
  }

  /** The oldest of the latest audit entries that record the stored document's digest (its updatedAt if none does). */
  private async documentWrittenAt(agreement: Agreement): Promise<Date> {
    const digest = agreementDigest(agreement);
    const history = await this.history(agreement.id);
    let writtenAt = agreement.updatedAt;
    for (let i = history.length - 1; i >= 0 && history[i]?.details.documentSha256 === digest; i--) {
      writtenAt = (history[i] as AuditEntry).at;
    }
    return writtenAt;
  }
}

function agreementSubject(id: string): AuditSubject {
  return { kind: 'agreement', id };
}

/** What is wrong with `entry` at position `expectedSeq` after a link with hash `prevHash`; undefined if nothing. */
function brokenLink(entry: AuditEntry, expectedSeq: number, prevHash: string): string | undefined {
  if (entry.seq > expectedSeq) return `seq gap: row ${expectedSeq} is missing (the next row is ${entry.seq})`;
  if (entry.seq !== expectedSeq) return `rows out of order: row ${entry.seq} comes where row ${expectedSeq} should`;
  if (entry.prevHash !== prevHash) {
    return expectedSeq === 1
      ? 'prevHash of row 1 is not 64 zeros: rows before it were removed'
      : `prevHash of row ${expectedSeq} does not match the hash of row ${expectedSeq - 1}`;
  }
  let hash: string;
  try {
    hash = auditEntryHash(entry);
  } catch (error) {
    return `row ${expectedSeq} cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (hash !== entry.hash) return `hash mismatch in row ${expectedSeq}: its content changed after it was written`;
  return undefined;
}
