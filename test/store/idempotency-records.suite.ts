import { describe, expect, it } from 'vitest';
import type { IdempotencyRecords } from '../../src/engine/ports.js';

const at = (hours: number) => new Date(Date.UTC(2030, 0, 1, 8) + hours * 3600_000);
const day = 24;

/** The IdempotencyRecords contract (src/engine/ports.ts); every implementation runs it. */
export function idempotencyRecordsContract(
  name: string,
  make: () => Promise<IdempotencyRecords> | IdempotencyRecords,
): void {
  describe(`${name} satisfies the IdempotencyRecords contract`, () => {
    it('keeps the first claim of a key per party, with its answer once given, for as long as asked', async () => {
      const records = await make();
      const first = { party: 'alice', key: 'k1', fingerprint: 'f1', agreementId: 'a1', createdAt: at(0) };
      expect(await records.claim(first, at(-day))).toEqual(first);
      // The same key again (another body, another id): the first claim is what is kept.
      expect(
        await records.claim({ ...first, fingerprint: 'f2', agreementId: 'a2', createdAt: at(1) }, at(1 - day)),
      ).toEqual(first);
      // Another party's key of the same name is its own.
      const bob = { party: 'bob', key: 'k1', fingerprint: 'f3', createdAt: at(1) };
      expect(await records.claim(bob, at(1 - day))).toEqual(bob);
      await records.answered('alice', 'k1', { status: 201, body: '{"id":"a1"}' });
      expect(await records.claim({ ...first, createdAt: at(2) }, at(2 - day))).toEqual({
        ...first,
        answer: { status: 201, body: '{"id":"a1"}' },
      });
      // Older than the horizon: forgotten, and the key is free again.
      const later = { ...first, fingerprint: 'f4', agreementId: 'a4', createdAt: at(day + 1) };
      expect(await records.claim(later, at(1))).toEqual(later);
    });
  });
}
