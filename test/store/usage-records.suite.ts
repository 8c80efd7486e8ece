import { describe, expect, it } from 'vitest';
import type { StoredUsageRecord, UsageRecordStore } from '../../src/engine/accounting/ports.js';

const t0 = Date.UTC(2030, 0, 1, 8, 0, 0);
const record = (agreementId: string, minutes: number, initiator = 'CN=alice', signed?: string): StoredUsageRecord => ({
  agreementId,
  initiator,
  createdAt: new Date(t0 + minutes * 60_000),
  xml: `<ur:JobUsageRecord>${agreementId}</ur:JobUsageRecord>`,
  ...(signed ? { signed } : {}),
});

/** The UsageRecordStore contract (src/engine/ports.ts); every implementation runs it. */
export function usageRecordStoreContract(name: string, make: () => Promise<UsageRecordStore> | UsageRecordStore): void {
  describe(`${name} satisfies the UsageRecordStore contract`, () => {
    it('stores a record once: a second one for the same agreement changes nothing', async () => {
      const store = await make();
      expect(await store.add(record('a-1', 1, 'CN=alice', '<signed/>'))).toBe(true);
      expect(await store.add({ ...record('a-1', 5), xml: '<other/>' })).toBe(false);
      expect(await store.get('a-1')).toEqual(record('a-1', 1, 'CN=alice', '<signed/>'));
      expect(await store.get('a-2')).toBeUndefined();
    });

    it('lists in order of creation, by initiator, after a cursor, at most a limit; absent fields stay absent', async () => {
      const store = await make();
      for (const [id, minutes, who] of [
        ['b', 3, 'CN=bob'],
        ['a', 1, 'CN=alice'],
        ['c', 3, 'CN=alice'],
        ['d', 7, 'CN=bob'],
      ] as const)
        await store.add(record(id, minutes, who));
      expect((await store.list()).map((r) => r.agreementId)).toEqual(['a', 'b', 'c', 'd']);
      expect((await store.list({ initiator: 'CN=bob' })).map((r) => r.agreementId)).toEqual(['b', 'd']);
      expect(
        (await store.list({ after: { createdAt: new Date(t0 + 3 * 60_000), id: 'b' } })).map((r) => r.agreementId),
      ).toEqual(['c', 'd']);
      expect((await store.list({ limit: 2 })).map((r) => r.agreementId)).toEqual(['a', 'b']);
      expect('signed' in ((await store.get('a')) as StoredUsageRecord)).toBe(false);
    });
  });
}
