import { createHash } from 'node:crypto';
import type { AuditDetails, AuditEntry, AuditRecord, JsonValue } from '../ports.js';

/**
 * The audit log's hash chain (the AuditLog contract in ports.ts). Every AuditLog
 * implementation builds its entries with `chainEntry`, and AuditService checks them with
 * `auditEntryHash`, so there is one definition of the chain.
 */

/** The prevHash of the first entry. */
export const genesisHash = '0'.repeat(64);

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * JSON with object keys sorted (by UTF-16 code units) and no whitespace: the same value
 * always gives the same text. Hand-written rather than a library's output, because stored
 * hashes depend on it byte for byte and must never change with a dependency upgrade.
 */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as JsonValue)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * sha256 hex over the canonical serialisation of (seq, at as ISO 8601, actor, subject kind,
 * subject id, action, canonical JSON of details, prevHash): a JSON array of those values.
 * `canonicalDetails`, when the caller has it, is canonicalJson(entry.details).
 */
export function auditEntryHash(entry: Omit<AuditEntry, 'hash'>, canonicalDetails = canonicalJson(entry.details)): string {
  const fields: JsonValue[] = [
    entry.seq,
    entry.at.toISOString(),
    entry.actor,
    entry.subject.kind,
    entry.subject.id,
    entry.action,
    canonicalDetails,
    entry.prevHash,
  ];
  return sha256Hex(JSON.stringify(fields));
}

/** An entry with the canonical JSON of its details, which its hash covers and a store keeps: made once. */
export interface ChainedEntry {
  entry: AuditEntry;
  canonicalDetails: string;
}

/**
 * The entry that follows `previous` (undefined: the first entry). Details are taken as JSON
 * gives them back (undefined fields dropped, a stray Date as its ISO string), so the entry
 * hashes the same before it is stored and after it is read.
 */
export function chainEntry(record: AuditRecord, previous: Pick<AuditEntry, 'seq' | 'hash'> | undefined): ChainedEntry {
  const details = JSON.parse(JSON.stringify(record.details)) as AuditDetails;
  const entry: Omit<AuditEntry, 'hash'> = {
    seq: (previous?.seq ?? 0) + 1,
    at: new Date(record.at.getTime()),
    actor: record.actor,
    subject: { kind: record.subject.kind, id: record.subject.id },
    action: record.action,
    details,
    prevHash: previous?.hash ?? genesisHash,
  };
  const canonicalDetails = canonicalJson(details);
  return { entry: { ...entry, hash: auditEntryHash(entry, canonicalDetails) }, canonicalDetails };
}
