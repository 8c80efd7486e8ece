import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  AgreementRepository,
  AuditEntry,
  AuditLog,
  AuditNote,
  AuditRecord,
  NegotiationRepository,
} from '../../src/engine/ports.js';
import { makeAgreement } from './fixtures/make-agreement.js';
import { makeNegotiation } from './fixtures/make-negotiation.js';

/** An audit log and the repositories that write to it, as one store provides them. */
export interface AuditedStore {
  audit: AuditLog;
  agreements: AgreementRepository;
  negotiations: NegotiationRepository;
  close(): Promise<void>;
}

const t0 = Date.UTC(2030, 0, 1, 8, 0, 0);
const zeros = '0'.repeat(64);

function record(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    at: new Date(t0),
    actor: 'CN=alice',
    subject: { kind: 'agreement', id: 'agr-1' },
    action: 'created',
    details: { state: 'Observed' },
    ...overrides,
  };
}

function note(action: string, details: AuditNote['details'] = {}): AuditNote {
  return { at: new Date(t0 + 1000), actor: 'CN=bob', action, details };
}

/**
 * The hash the AuditLog contract defines, written out here independently of
 * src/engine/audit/audit-chain.ts: sha256 hex of the JSON array (seq, at ISO, actor, subject kind,
 * subject id, action, details as JSON with sorted keys, prevHash).
 */
function expectedHash(e: AuditEntry, sortedDetails: string): string {
  const fields = [
    e.seq,
    e.at.toISOString(),
    e.actor,
    e.subject.kind,
    e.subject.id,
    e.action,
    sortedDetails,
    e.prevHash,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** The AuditLog contract (src/engine/ports.ts), with the repositories' audited writes; every store runs it. */
export function auditLogContract(name: string, make: () => Promise<AuditedStore> | AuditedStore): void {
  describe(`${name} satisfies the AuditLog contract`, () => {
    let store: AuditedStore;
    beforeEach(async () => {
      store = await make();
    });
    afterEach(async () => {
      await store.close();
    });

    it('starts empty', async () => {
      expect(await store.audit.entries()).toEqual([]);
      expect(await store.audit.latest({ kind: 'agreement', id: 'agr-1' })).toBeUndefined();
    });

    it('numbers entries 1, 2, 3 and chains each to the one before, the first to 64 zeros', async () => {
      const first = await store.audit.append(record({ details: { b: 2, a: [1, { d: null, c: 'x' }] } }));
      const second = await store.audit.append(record({ action: 'terminated', details: {} }));
      const third = await store.audit.append(
        record({ subject: { kind: 'negotiation', id: 'neg-1' }, action: 'closed' }),
      );
      expect([first.seq, second.seq, third.seq]).toEqual([1, 2, 3]);
      expect(first.prevHash).toBe(zeros);
      expect(second.prevHash).toBe(first.hash);
      expect(third.prevHash).toBe(second.hash);
      expect(first.hash).toBe(expectedHash(first, '{"a":[1,{"c":"x","d":null}],"b":2}'));
      expect(second.hash).toBe(expectedHash(second, '{}'));
      expect(third.hash).toBe(expectedHash(third, '{"state":"Observed"}'));
      expect(await store.audit.entries()).toStrictEqual([first, second, third]);
    });

    it('gives back each entry as appended: Date, actor, subject, action and details', async () => {
      const appended = await store.audit.append(
        record({
          at: new Date(t0 + 123),
          details: { documentSha256: 'ab'.repeat(32), nested: { list: [1.5, true, 'x'] } },
        }),
      );
      const [got] = await store.audit.entries();
      expect(got).toStrictEqual(appended);
      expect(got).toMatchObject({
        at: new Date(t0 + 123),
        actor: 'CN=alice',
        subject: { kind: 'agreement', id: 'agr-1' },
        action: 'created',
        details: { documentSha256: 'ab'.repeat(32), nested: { list: [1.5, true, 'x'] } },
      });
    });

    it('keeps text exactly as given: quotes, backslashes, SQL and any Unicode, in every field and in details', async () => {
      const hostile = `o'brien \\ \\' E'\\x' $$ $q$ '); DROP TABLE audit_log; -- \u00e9 \u{1F600} \t\n\u2028`;
      const appended = await store.audit.append(
        record({
          actor: `CN=${hostile}`,
          subject: { kind: 'agreement', id: hostile },
          action: hostile,
          details: { [hostile]: [hostile, { nested: hostile }] },
        }),
      );
      await store.agreements.insert(makeAgreement({ id: 'after' }), [note('created', { why: hostile })]);
      const entries = await store.audit.entries();
      expect(entries[0]).toStrictEqual(appended);
      expect(entries.map((e) => [e.actor, e.subject.id, e.action])).toEqual([
        [`CN=${hostile}`, hostile, hostile],
        ['CN=bob', 'after', 'created'],
      ]);
      expect(entries[1]?.details).toEqual({ why: hostile });
      expect(entries[1]?.prevHash).toBe(appended.hash);
      expect(appended.hash).toBe(expectedHash(appended, JSON.stringify({ [hostile]: [hostile, { nested: hostile }] })));
    });

    it("filters by subject, by seq and by count, and finds a subject's newest entry", async () => {
      const a1 = { kind: 'agreement', id: 'agr-1' } as const;
      const a2 = { kind: 'agreement', id: 'agr-2' } as const;
      const n1 = { kind: 'negotiation', id: 'agr-1' } as const; // same id, other kind
      for (const subject of [a1, a2, n1, a1, a2, a1]) await store.audit.append(record({ subject }));
      const seqs = (entries: AuditEntry[]) => entries.map((e) => e.seq);
      expect(seqs(await store.audit.entries({ subject: a1 }))).toEqual([1, 4, 6]);
      expect(seqs(await store.audit.entries({ subject: n1 }))).toEqual([3]);
      expect(seqs(await store.audit.entries({ after: 2 }))).toEqual([3, 4, 5, 6]);
      expect(seqs(await store.audit.entries({ after: 2, limit: 2 }))).toEqual([3, 4]);
      expect(seqs(await store.audit.entries({ subject: a2, after: 2 }))).toEqual([5]);
      expect((await store.audit.latest(a1))?.seq).toBe(6);
      expect((await store.audit.latest(n1))?.seq).toBe(3);
      expect(await store.audit.latest({ kind: 'negotiation', id: 'agr-2' })).toBeUndefined();
    });

    it('does not let callers change stored entries through what it hands out', async () => {
      const appended = await store.audit.append(record({ details: { list: [1] } }));
      const expected = structuredClone(appended);
      appended.actor = 'mallory';
      const [got] = await store.audit.entries();
      got!.at.setTime(0);
      (got!.details.list as number[]).push(2);
      got!.subject.id = 'other';
      expect(await store.audit.entries()).toStrictEqual([expected]);
      expect(await store.audit.latest({ kind: 'agreement', id: 'agr-1' })).toStrictEqual(expected);
    });

    it('appends the notes of an agreement write about that agreement, continuing one chain with negotiations', async () => {
      await store.agreements.insert(makeAgreement({ id: 'agr-7' }), [note('created', { state: 'Observed' })]);
      await store.negotiations.insert(makeNegotiation({ id: 'neg-7' }), [
        note('created'),
        note('offers-received', { round: 1 }),
      ]);
      await store.agreements.update(makeAgreement({ id: 'agr-7', state: 'Terminated' }), [note('terminated')]);
      await store.agreements.update(makeAgreement({ id: 'agr-7', state: 'Terminated' })); // no notes: no entry
      const entries = await store.audit.entries();
      expect(entries.map((e) => [e.seq, e.subject.kind, e.subject.id, e.action, e.actor])).toEqual([
        [1, 'agreement', 'agr-7', 'created', 'CN=bob'],
        [2, 'negotiation', 'neg-7', 'created', 'CN=bob'],
        [3, 'negotiation', 'neg-7', 'offers-received', 'CN=bob'],
        [4, 'agreement', 'agr-7', 'terminated', 'CN=bob'],
      ]);
      expect(entries.slice(1).map((e) => e.prevHash)).toEqual(entries.slice(0, -1).map((e) => e.hash));
      expect(entries[2]?.details).toEqual({ round: 1 });
    });

    it('appends nothing when the write it comes with fails', async () => {
      await store.agreements.insert(makeAgreement({ id: 'dup' }), [note('created')]);
      await store.negotiations.insert(makeNegotiation({ id: 'dup-n' }), [note('created')]);
      await expect(store.agreements.insert(makeAgreement({ id: 'dup' }), [note('created')])).rejects.toThrow('dup');
      await expect(store.agreements.update(makeAgreement({ id: 'ghost' }), [note('terminated')])).rejects.toThrow(
        'ghost',
      );
      await expect(store.negotiations.insert(makeNegotiation({ id: 'dup-n' }), [note('created')])).rejects.toThrow(
        'dup-n',
      );
      await expect(store.negotiations.update(makeNegotiation({ id: 'ghost-n' }), [note('closed')])).rejects.toThrow(
        'ghost-n',
      );
      expect((await store.audit.entries()).map((e) => e.subject.id)).toEqual(['dup', 'dup-n']);
    });

    it('stores neither the change nor any of its notes when a note cannot be appended', async () => {
      // A BigInt cannot be written as JSON: the append fails, so the write it came with must not happen.
      const unwritable = { ...note('broken'), details: { big: 1n } } as unknown as AuditNote;
      await expect(
        store.agreements.insert(makeAgreement({ id: 'a-1' }), [note('created'), unwritable]),
      ).rejects.toThrow();
      expect(await store.agreements.get('a-1')).toBeUndefined();
      await store.agreements.insert(makeAgreement({ id: 'a-1' }), [note('created')]);
      await expect(
        store.agreements.update(makeAgreement({ id: 'a-1', state: 'Terminated' }), [unwritable]),
      ).rejects.toThrow();
      expect((await store.agreements.get('a-1'))?.state).toBe('Observed');
      await store.negotiations.insert(makeNegotiation(), [note('created')]);
      await expect(
        store.negotiations.update(makeNegotiation({ state: 'Closed' }), [note('closed'), unwritable]),
      ).rejects.toThrow();
      expect((await store.negotiations.get('neg-1'))?.state).toBe('Open');
      expect((await store.audit.entries()).map((e) => [e.seq, e.action])).toEqual([
        [1, 'created'],
        [2, 'created'],
      ]);
    });
  });
}
