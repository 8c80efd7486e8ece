import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agreement } from '../../src/domain/agreement.js';
import type { AgreementRepository } from '../../src/engine/ports.js';
import { makeAgreement, makeFullAgreement } from './fixtures/make-agreement.js';

/** The AgreementRepository contract (src/engine/ports.ts); every implementation runs it. */
export function agreementRepositoryContract(
  name: string,
  make: () => Promise<AgreementRepository> | AgreementRepository,
): void {
  describe(`${name} satisfies the AgreementRepository contract`, () => {
    let repo: AgreementRepository;
    beforeEach(async () => {
      repo = await make();
    });
    afterEach(async () => {
      await repo.close();
    });

    it('returns an inserted agreement unchanged, Dates and all optional fields included', async () => {
      const full = makeFullAgreement();
      await repo.insert(full);
      const got = await repo.get(full.id);
      expect(got).toStrictEqual(full);
      expect(got?.request.window?.start).toBeInstanceOf(Date);
    });

    it('keeps text exactly as given: quotes, backslashes, SQL and any Unicode, in its id, fields and document', async () => {
      const hostile = `o'brien \\ \\' E'\\x' $$ '); DROP TABLE agreements; -- \u00e9 \u{1F600} \t\n\u2028`;
      const full = makeFullAgreement();
      const strange: Agreement = {
        ...full,
        id: `id ${hostile}`,
        name: hostile,
        initiator: `CN=${hostile}`,
        document: `<doc a="${hostile}">${hostile}</doc>`,
      };
      await repo.insert(strange);
      expect(await repo.get(strange.id)).toStrictEqual(strange);
    });

    it('leaves absent optional fields absent', async () => {
      const minimal = makeAgreement();
      await repo.insert(minimal);
      // toStrictEqual fails on `name: undefined` where the original has no `name` key.
      expect(await repo.get(minimal.id)).toStrictEqual(minimal);
    });

    it('keeps a lone negotiation field without inventing the others, and replaces it on update', async () => {
      const reserved = makeAgreement({ id: 'r-1', usedBy: 'agr-job-2' });
      await repo.insert(reserved);
      expect(await repo.get('r-1')).toStrictEqual(reserved);
      const priced = makeAgreement({ id: 'r-1', price: { amount: 0, currency: 'EUR' } });
      await repo.update(priced);
      expect(await repo.get('r-1')).toStrictEqual(priced);
    });

    it("keeps an allocation without the scheduler's plan as it is, and replaces the plan on update", async () => {
      const unplanned = makeAgreement({
        id: 'p-1',
        allocation: { start: new Date(Date.UTC(2030, 0, 1, 9)), end: new Date(Date.UTC(2030, 0, 1, 11)), nodes: 8 },
      });
      await repo.insert(unplanned);
      expect(await repo.get('p-1')).toStrictEqual(unplanned);
      const planned = makeFullAgreement({ id: 'p-1' });
      await repo.update(planned);
      expect(await repo.get('p-1')).toStrictEqual(planned);
      await repo.update(unplanned);
      expect(await repo.get('p-1')).toStrictEqual(unplanned);
    });

    it('returns undefined for an unknown id', async () => {
      expect(await repo.get('no-such-agreement')).toBeUndefined();
    });

    it('rejects inserting an existing id, naming it, and keeps the first', async () => {
      const first = makeAgreement({ id: 'dup-1' });
      await repo.insert(first);
      await expect(repo.insert(makeAgreement({ id: 'dup-1', state: 'Rejected' }))).rejects.toThrow('dup-1');
      expect(await repo.get('dup-1')).toStrictEqual(first);
    });

    it('replaces the stored agreement on update, including removing optional fields', async () => {
      await repo.insert(makeFullAgreement({ id: 'u-1' }));
      const updated = makeAgreement({
        id: 'u-1',
        state: 'Complete',
        serviceTerms: [{ termName: 'job', state: 'Completed' }],
        document: '<wsag:AgreementOffer AgreementId="u-1" v="2"/>',
        updatedAt: new Date(Date.UTC(2030, 0, 2)),
      });
      await repo.update(updated);
      expect(await repo.get('u-1')).toStrictEqual(updated);
    });

    it('stores a changed initiator and creation time on update, and lists by them', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      await repo.insert(makeAgreement({ id: 'moved', initiator: 'alice', createdAt: at(5) }));
      await repo.insert(makeAgreement({ id: 'stays', initiator: 'alice', createdAt: at(3) }));
      const moved = makeAgreement({ id: 'moved', initiator: 'bob', createdAt: at(1), state: 'Complete' });
      await repo.update(moved);
      expect(await repo.get('moved')).toStrictEqual(moved);
      expect((await repo.list()).map((a) => a.id)).toEqual(['moved', 'stays']);
      expect((await repo.list({ initiator: 'bob' })).map((a) => a.id)).toEqual(['moved']);
    });

    /**
     * `write(committed)` stores agreement `id`; `failing(committed)` is a write of the same kind that fails (naming `failingId`).
     * Its `committed` runs once, when reads see the change and before the write resolves; never for the failed write.
     */
    async function committedOnceBeforeResolving(
      write: (committed: () => void) => Promise<void>,
      id: string,
      failing: (committed: () => void) => Promise<void>,
      failingId: string,
    ): Promise<Agreement | undefined> {
      const calls: Array<Promise<Agreement | undefined>> = [];
      let resolved = false;
      await write(() => {
        expect(resolved).toBe(false);
        calls.push(repo.get(id));
      }).then(() => {
        resolved = true;
      });
      expect(calls).toHaveLength(1);
      await expect(failing(() => calls.push(Promise.resolve(undefined)))).rejects.toThrow(failingId);
      expect(calls).toHaveLength(1);
      return calls[0];
    }

    it("runs an insert's `committed` once, when reads see the agreement and before it resolves; never for a failed insert", async () => {
      const seen = await committedOnceBeforeResolving(
        (committed) => repo.insert(makeAgreement({ id: 'i-1' }), [], committed),
        'i-1',
        (committed) => repo.insert(makeAgreement({ id: 'i-1' }), [], committed),
        'i-1',
      );
      expect(seen?.id).toBe('i-1');
    });

    it("runs an update's `committed` once, when reads see the change and before it resolves; never for a failed update", async () => {
      await repo.insert(makeAgreement({ id: 'c-1' }));
      const seen = await committedOnceBeforeResolving(
        (committed) => repo.update(makeAgreement({ id: 'c-1', state: 'Complete' }), [], committed),
        'c-1',
        (committed) => repo.update(makeAgreement({ id: 'ghost-8' }), [], committed),
        'ghost-8',
      );
      expect(seen?.state).toBe('Complete');
    });

    it('rejects updating an unknown id, naming it, and does not create it', async () => {
      await expect(repo.update(makeAgreement({ id: 'ghost-9' }))).rejects.toThrow('ghost-9');
      expect(await repo.get('ghost-9')).toBeUndefined();
    });

    it('lists by creation time then id, and filters by initiator', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      // Inserted out of order; b and a share a creation time, so id decides.
      await repo.insert(makeAgreement({ id: 'c', initiator: 'alice', createdAt: at(2) }));
      await repo.insert(makeAgreement({ id: 'b', initiator: 'bob', createdAt: at(1) }));
      await repo.insert(makeAgreement({ id: 'a', initiator: 'alice', createdAt: at(1) }));
      await repo.insert(makeAgreement({ id: 'd', initiator: 'alice', createdAt: at(0) }));

      expect((await repo.list()).map((a) => a.id)).toEqual(['d', 'a', 'b', 'c']);
      expect((await repo.list({})).map((a) => a.id)).toEqual(['d', 'a', 'b', 'c']);
      expect((await repo.list({ initiator: 'alice' })).map((a) => a.id)).toEqual(['d', 'a', 'c']);
      expect(await repo.list({ initiator: 'nobody' })).toEqual([]);
      expect((await repo.list())[0]).toStrictEqual(makeAgreement({ id: 'd', initiator: 'alice', createdAt: at(0) }));
    });

    it('lists in pages: after a cursor (creation time and id), at most a limit, with filters by state and initiator', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      const states = ['Observed', 'Terminated'] as const;
      for (let i = 0; i < 7; i++) {
        await repo.insert(
          makeAgreement({
            id: `x${i}`,
            initiator: i % 3 === 0 ? 'bob' : 'alice',
            state: states[i % 2],
            createdAt: at(Math.floor(i / 2)),
          }),
        );
      }
      const ids = async (filter: Parameters<typeof repo.list>[0]) => (await repo.list(filter)).map((a) => a.id);
      expect(await ids({ limit: 3 })).toEqual(['x0', 'x1', 'x2']);
      // x1 and x0 share a creation time: the cursor's id tells them apart.
      expect(await ids({ limit: 3, after: { createdAt: at(0), id: 'x0' } })).toEqual(['x1', 'x2', 'x3']);
      expect(await ids({ limit: 10, after: { createdAt: at(3), id: 'x6' } })).toEqual([]);
      expect(await ids({ state: 'Terminated' })).toEqual(['x1', 'x3', 'x5']);
      expect(await ids({ state: ['Terminated', 'Observed'], limit: 4 })).toEqual(['x0', 'x1', 'x2', 'x3']);
      expect(await ids({ state: ['Pending'] })).toEqual([]);
      expect(
        await ids({ state: 'Observed', initiator: 'alice', limit: 1, after: { createdAt: at(1), id: 'x2' } }),
      ).toEqual(['x4']);
      expect(await ids({ limit: 0 })).toEqual([]);
      // Paging through returns every item once, in list order.
      const seen: string[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await repo.list({ limit: 2, ...(after ? { after } : {}) });
        if (page.length === 0) break;
        seen.push(...page.map((a) => a.id));
        const last = page.at(-1) as { createdAt: Date; id: string };
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(await ids({}));
    });

    it('lists without documents when asked, everything else as stored, and keeps the documents', async () => {
      const full = makeFullAgreement();
      await repo.insert(full);
      await repo.insert(makeAgreement({ id: 'other', state: 'Terminated' }));
      const listed = await repo.list({ state: full.state, withoutDocument: true });
      expect(listed).toStrictEqual([{ ...full, document: '' }]);
      expect(full.document.length).toBeGreaterThan(0);
      expect((await repo.get(full.id))?.document).toBe(full.document);
      expect((await repo.list({ state: full.state }))[0]?.document).toBe(full.document);
    });

    it('counts agreements by state, leaving out states with none', async () => {
      expect(await repo.countByState()).toEqual({});
      await repo.insert(makeAgreement({ id: 'c-1', state: 'Observed' }));
      await repo.insert(makeAgreement({ id: 'c-2', state: 'Observed' }));
      await repo.insert(makeAgreement({ id: 'c-3', state: 'Pending' }));
      await repo.update(makeAgreement({ id: 'c-2', state: 'Terminated' }));
      expect(await repo.countByState()).toEqual({ Observed: 1, Pending: 1, Terminated: 1 });
    });

    it('does not let callers mutate stored state through objects passed in or handed out', async () => {
      const original = makeFullAgreement({ id: 'm-1' });
      const inserted = structuredClone(original);
      await repo.insert(inserted);
      inserted.state = 'Terminated';
      inserted.request.libraries.push({ name: 'evil', version: '1', loaded: false });

      const got = await repo.get('m-1');
      if (got === undefined) throw new Error('m-1 missing');
      got.state = 'Rejected';
      got.serviceTerms[0]!.state = 'Completed';
      got.request.window!.start.setTime(0);
      got.allocation!.nodes = 1;
      got.allocation!.segments![0]!.nodeIds.push('evil');
      got.allocation!.segments![1]!.end.setTime(0);
      got.allocation!.checkpoints!.count = 99;
      got.allocation!.arrival!.setTime(0);
      got.price!.amount = 0;
      got.origin!.offerId = 'other';
      got.alternative!.terms.push('evil');

      const [listed] = await repo.list();
      if (listed === undefined) throw new Error('list empty');
      listed.request.securityPolicy.length = 0;
      listed.createdAt.setTime(0);

      expect(await repo.get('m-1')).toStrictEqual(original);
    });
  });
}
