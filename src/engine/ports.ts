import type { Agreement } from '../domain/agreement.js';
import type { AgreementTemplate } from '../domain/template.js';
import type { GuaranteeTerm, ServiceRequest } from '../domain/terms.js';

/**
 * The ports the engine needs; adapters implement them (src/store, src/xml, src/main.ts).
 * Contracts are documented here and proven by shared test suites in test/.
 */

/**
 * Durable agreement storage. Contract: `insert` and `update` resolve only once the change
 * is durable (it survives a crash of the process); `insert` of an existing id rejects;
 * `get` of an unknown id resolves to undefined; `list` orders by creation time, then id;
 * callers always get copies, never objects the store keeps. The engine serialises updates
 * of one agreement.
 */
export interface AgreementRepository {
  insert(agreement: Agreement): Promise<void>;
  /** Replaces the stored agreement with the same id; rejects when there is none. */
  update(agreement: Agreement): Promise<void>;
  get(id: string): Promise<Agreement | undefined>;
  list(filter?: { initiator?: string }): Promise<Agreement[]>;
  close(): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export interface IdSource {
  /** A new unique, URL-safe identifier. */
  next(): string;
}

/** An offer as received: parsed, schema-valid, mapped to domain terms. Opaque XML stays in the adapter. */
export interface ReceivedOffer {
  name?: string;
  templateId?: string;
  templateName?: string;
  request: ServiceRequest;
  guaranteeTerms: GuaranteeTerm[];
  serviceTermNames: string[];
}

/** Templates and their creation constraints (implemented over XML by src/xml). */
export interface TemplateCatalog {
  list(): AgreementTemplate[];
  find(ref: { id?: string; name?: string }): AgreementTemplate | undefined;
  /** Throws CreationConstraintViolation naming the Item (or Constraint) and the facet that failed. */
  checkCreationConstraints(template: AgreementTemplate, offer: ReceivedOffer): void;
}

export interface AgreementDetails {
  agreementId: string;
  responder: string;
  initiator: string;
  templateId: string;
  templateName: string;
}

/** Writes the agreement document the provider commits to. */
export interface AgreementDocumentWriter {
  write(offer: ReceivedOffer, details: AgreementDetails): string;
}
