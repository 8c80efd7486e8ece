import crypto from 'node:crypto';
import type { AuditDetails, AuditEntry, AuditRecord, JsonValue } from '../ports.js';

/**
 * The audit log's hash chain (the AuditLog contract in ports.ts). Every AuditLog
 * implementation builds its entries with `chainEntry`, and AuditService checks them with
 * `auditEntryHash`, so there is one definition of the chain.
 */

/** The prevHash of the first entry. */
export const genesisHash = '0'.repeat(64);

/** crypto.hash: one call, no Hash object (a third faster for an entry's few hundred bytes); Node 20.12 and later. */
export function sha256Hex(text: string): string {
  return crypto.hash('sha256', text, 'hex');
}

/**
 * JSON with object keys sorted (by UTF-16 code units) and no whitespace: the same value
 * always gives the same text. Hand-written rather than a library's output, because stored
 * hashes depend on it byte for byte and must never change with a dependency upgrade. A
 * value that is not plain JSON is read as JSON.stringify reads it (toJSON applied, so a
 * Date is its ISO string; undefined members left out, undefined in an array null), so
 * canonicalJson(x) is canonicalJson(JSON.parse(JSON.stringify(x))), written in one pass.
 */
export function canonicalJson(value: JsonValue): string {
  const text = canonicalPart(value);
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON form`);
  return text;
}

/** One value's canonical JSON; undefined where JSON.stringify leaves the value out. */
function canonicalPart(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'bigint': // JSON.stringify throws for it, as JSON has none
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${canonicalPart(value[i]) ?? 'null'}`;
        return `${out}]`;
      }
      const record = value as Record<string, unknown>;
      let out = '{';
      for (const key of sortedKeys(record)) {
        const part = canonicalPart(record[key]);
        if (part !== undefined) out += `${out.length === 1 ? '' : ','}${quotedKey(key)}:${part}`;
      }
      return `${out}}`;
    }
    default: // undefined, a function, a symbol
      return undefined;
  }
}

/**
 * The object's keys in UTF-16 code unit order (what Array.prototype.sort gives), sorted in
 * place: an audit entry's objects have a few keys, and sort() would copy them to sort.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && (keys[j] as string) > key; j--) keys[j + 1] = keys[j] as string;
    keys[j + 1] = key;
  }
  return keys;
}

/** Keys as JSON strings, remembered: entries use a few dozen names, and each entry wrote them again. */
const quotedKeys = new Map<string, string>();
const quotedKeysKept = 1024;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < quotedKeysKept) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * sha256 hex over the canonical serialisation of (seq, at as ISO 8601, actor, subject kind,
 * subject id, action, canonical JSON of details, prevHash): a JSON array of those values.
 * `canonicalDetails`, when the caller has it, is canonicalJson(entry.details).
 */
export function auditEntryHash(
  entry: Omit<AuditEntry, 'hash'>,
  canonicalDetails = canonicalJson(entry.details),
): string {
  return hashOf(entry, canonicalDetails);
}

/** auditEntryHash of an entry's fields but its details, given as their canonical JSON. */
function hashOf(entry: Omit<AuditEntry, 'hash' | 'details'>, canonicalDetails: string): string {
  // JSON.stringify of the array, written as its three parts: see hashedFieldsBetween.
  return sha256Hex(
    `[${JSON.stringify(entry.seq)},${hashedFieldsBetween(entry, canonicalDetails)},${JSON.stringify(entry.prevHash)}]`,
  );
}

/**
 * The hashed text's fields between seq and prevHash, as JSON (without the brackets): what a
 * store that numbers and chains entries where it keeps them (PostgreSQL, in SQL) needs from
 * here, the text hashed being `[seq,` this `,"prevHash"]`.
 */
export function hashedFieldsBetween(
  entry: Pick<AuditEntry, 'at' | 'actor' | 'subject' | 'action'>,
  canonicalDetails: string,
): string {
  const fields: JsonValue[] = [
    entry.at.toISOString(),
    entry.actor,
    entry.subject.kind,
    entry.subject.id,
    entry.action,
    canonicalDetails,
  ];
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
  const canonicalDetails = canonicalJson(record.details);
  return {
    entry: { ...recordFields(record), details: JSON.parse(canonicalDetails) as AuditDetails },
    canonicalDetails,
  };
}

/** The record's fields an entry copies, but its details. */
function recordFields(record: AuditRecord): Pick<AuditEntry, 'at' | 'actor' | 'subject' | 'action'> {
  return {
    at: new Date(record.at.getTime()),
    actor: record.actor,
    subject: { kind: record.subject.kind, id: record.subject.id },
    action: record.action,
  };
}

/**
 * What a store writes of an entry: its fields, the canonical JSON of its details (which
 * the hash covers and the store keeps), its number and both hashes. The details object
 * itself is made only for an entry handed back (`entryOf`): a repository's writes never
 * read it, and parsing the details again was about a tenth of chaining an entry.
 */
export interface ChainedRow extends Omit<AuditEntry, 'details'> {
  canonicalDetails: string;
}

/** The row of the entry that follows `previous` (undefined: the first entry). */
export function chainRow(record: AuditRecord, previous: Pick<AuditEntry, 'seq' | 'hash'> | undefined): ChainedRow {
  const canonicalDetails = canonicalJson(record.details);
  const seq = (previous?.seq ?? 0) + 1;
  const prevHash = previous?.hash ?? genesisHash;
  const fields = { seq, ...recordFields(record), prevHash };
  return { ...fields, hash: hashOf(fields, canonicalDetails), canonicalDetails };
}

/** The entry a chained row stands for, its details as JSON gives them back. */
export function entryOf(row: ChainedRow): AuditEntry {
  const { seq, at, actor, subject, action, prevHash, hash, canonicalDetails } = row;
  return { seq, at, actor, subject, action, details: JSON.parse(canonicalDetails) as AuditDetails, prevHash, hash };
}

/** The entry that follows `previous` (undefined: the first entry). */
export function chainEntry(record: AuditRecord, previous: Pick<AuditEntry, 'seq' | 'hash'> | undefined): ChainedEntry {
  const row = chainRow(record, previous);
  return { entry: entryOf(row), canonicalDetails: row.canonicalDetails };
}

/** The entry numbered `seq` after the one whose hash is `prevHash`, its fields in the order entries are written. */
export function chained(entry: UnchainedEntry['entry'], seq: number, prevHash: string): Omit<AuditEntry, 'hash'> {
  return {
    seq,
    at: entry.at,
    actor: entry.actor,
    subject: entry.subject,
    action: entry.action,
    details: entry.details,
    prevHash,
  };
}
