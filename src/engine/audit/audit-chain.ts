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
  // JSON.stringify of the array, written as its three parts: see hashedFieldsBetween.
  return sha256Hex(`[${JSON.stringify(entry.seq)},${hashedFieldsBetween(entry, canonicalDetails)},${JSON.stringify(entry.prevHash)}]`);
}

/**
 * The hashed text's fields between seq and prevHash, as JSON (without the brackets): what a
 * store that numbers and chains entries where it keeps them (PostgreSQL, in SQL) needs from
 * here, the text hashed being `[seq,` this `,"prevHash"]`.
 */
export function hashedFieldsBetween(entry: Pick<AuditEntry, 'at' | 'actor' | 'subject' | 'action'>, canonicalDetails: string): string {
  const fields: JsonValue[] = [entry.at.toISOString(), entry.actor, entry.subject.kind, entry.subject.id, entry.action, canonicalDetails];
  return JSON.stringify(fields).slice(1, -1);
}

/** An entry with the canonical JSON of its details, which its hash covers and a store keeps: made once. */
export interface ChainedEntry {
  entry: AuditEntry;
  canonicalDetails: string;
}

/** An entry before it is numbered and chained: its hash is still to be made. */
export interface UnchainedEntry {
  entry: Omit<AuditEntry, 'seq' | 'prevHash' | 'hash'>;
  canonicalDetails: string;
}

/**
 * The entry a record makes, not yet numbered nor chained. Details are taken as JSON gives
 * them back (undefined fields dropped, a stray Date as its ISO string), so the entry hashes
 * the same before it is stored and after it is read.
 */
export function unchainedEntry(record: AuditRecord): UnchainedEntry {
  const details = JSON.parse(JSON.stringify(record.details)) as AuditDetails;
  return {
    entry: {
      at: new Date(record.at.getTime()),
      actor: record.actor,
      subject: { kind: record.subject.kind, id: record.subject.id },
      action: record.action,
      details,
    },
    canonicalDetails: canonicalJson(details),
  };
}

/** The entry that follows `previous` (undefined: the first entry). */
export function chainEntry(record: AuditRecord, previous: Pick<AuditEntry, 'seq' | 'hash'> | undefined): ChainedEntry {
  const { entry: unchained, canonicalDetails } = unchainedEntry(record);
  const entry = chained(unchained, (previous?.seq ?? 0) + 1, previous?.hash ?? genesisHash);
  return { entry: { ...entry, hash: auditEntryHash(entry, canonicalDetails) }, canonicalDetails };
}

/** The entry numbered `seq` after the one whose hash is `prevHash`, its fields in the order entries are written. */
export function chained(entry: UnchainedEntry['entry'], seq: number, prevHash: string): Omit<AuditEntry, 'hash'> {
  return { seq, at: entry.at, actor: entry.actor, subject: entry.subject, action: entry.action, details: entry.details, prevHash };
}
