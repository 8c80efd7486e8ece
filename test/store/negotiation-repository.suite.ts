import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NegotiationRepository } from '../../src/engine/ports.js';
import { makeFullNegotiation, makeHold, makeNegotiation, makeOffer } from './fixtures/make-negotiation.js';

/** The NegotiationRepository contract (src/engine/ports.ts); every implementation runs it. */
export function negotiationRepositoryContract(
  name: string,
  make: () => Promise<NegotiationRepository> | NegotiationRepository,
): void {
  describe(`${name} satisfies the NegotiationRepository contract`, () => {
    let repo: NegotiationRepository;
    beforeEach(async () => {
      repo = await make();
    });
    afterEach(async () => {
      await repo.close();
    });

    // An open negotiation may be read back from memory (SqliteNegotiationRepository's RecentNegotiations), a closed one from its row.
    it.each(['Open', 'Concluded'] as const)(
      'returns an inserted negotiation unchanged, Dates and all optional fields included (%s)',
      async (state) => {
        const full = makeFullNegotiation({ state });
        await repo.insert(full);
        const got = await repo.get(full.id);
        expect(got).toStrictEqual(full);
        // toStrictEqual already tells a Date from an ISO string; these name the fields that matter.
        const [o1, o2] = got?.offers ?? [];
        expect(got?.expiresAt).toBeInstanceOf(Date);
        expect(o1?.expirationTime).toBeInstanceOf(Date);
        expect(o1?.request.window?.end).toBeInstanceOf(Date);
        expect(o2?.hold?.endedAt).toBeInstanceOf(Date);
        expect(o2?.hold?.allocation.start).toBeInstanceOf(Date);
      },
    );

    it('leaves absent optional fields absent, in the negotiation, its offers and their holds', async () => {
      const minimal = makeNegotiation({ offers: [makeOffer({ hold: makeHold() })] });
      await repo.insert(minimal);
      // toStrictEqual fails on `note: undefined` where the original has no `note` key.
      expect(await repo.get(minimal.id)).toStrictEqual(minimal);
    });

    it('keeps text exactly as given: quotes, backslashes, SQL and any Unicode, in its id, fields, offers and their documents', async () => {
      const hostile = `o'brien \\ \\' E'\\x' $$ '); DROP TABLE negotiations; -- \u00e9 \u{1F600} \t\n\u2028`;
      const offer = (n: number) =>
        makeOffer({
          offerId: `offer-${n} ${hostile}`,
          note: hostile,
          document: `<o n="${n}" a="${hostile}">${hostile}</o>`,
        });
      const first = makeNegotiation({ id: `neg ${hostile}`, initiator: `CN=${hostile}`, offers: [offer(1)] });
      await repo.insert(first);
      expect(await repo.get(first.id)).toStrictEqual(first);
      const second = { ...first, rounds: 1, offers: [offer(1), offer(2)] };
      await repo.update(second);
      expect(await repo.get(first.id)).toStrictEqual(second);
    });

    it('returns undefined for an unknown id', async () => {
      expect(await repo.get('no-such-negotiation')).toBeUndefined();
    });

    it('rejects inserting an existing id, naming it, and keeps the first', async () => {
      const first = makeNegotiation({ id: 'dup-1' });
      await repo.insert(first);
      await expect(repo.insert(makeNegotiation({ id: 'dup-1', state: 'Terminated' }))).rejects.toThrow('dup-1');
      expect(await repo.get('dup-1')).toStrictEqual(first);
    });

    it.each(['Open', 'Terminated'] as const)(
      'replaces the stored negotiation on update, including removing optional fields (%s)',
      async (state) => {
        await repo.insert(makeFullNegotiation({ id: 'u-1', state: 'Open' }));
        const updated = makeNegotiation({
          id: 'u-1',
          state,
          rounds: 4,
          offers: [makeOffer({ offerId: 'o-1' })],
          updatedAt: new Date(Date.UTC(2030, 0, 2)),
        });
        await repo.update(updated);
        expect(await repo.get('u-1')).toStrictEqual(updated);
      },
    );

    it('stores a changed initiator and creation time on update, and lists by them', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      await repo.insert(makeNegotiation({ id: 'moved', initiator: 'alice', createdAt: at(5) }));
      await repo.insert(makeNegotiation({ id: 'stays', initiator: 'alice', createdAt: at(3) }));
      const moved = makeNegotiation({ id: 'moved', initiator: 'bob', createdAt: at(1), state: 'Terminated' });
      await repo.update(moved);
      expect(await repo.get('moved')).toStrictEqual(moved);
      expect((await repo.list()).map((n) => n.id)).toEqual(['moved', 'stays']);
      expect((await repo.list({ initiator: 'bob' })).map((n) => n.id)).toEqual(['moved']);
    });

    it('rejects updating an unknown id, naming it, and does not create it', async () => {
      await expect(repo.update(makeNegotiation({ id: 'ghost-9' }))).rejects.toThrow('ghost-9');
      expect(await repo.get('ghost-9')).toBeUndefined();
    });

    it('lists by creation time then id, and filters by initiator', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      // Inserted out of order; b and a share a creation time, so id decides.
      await repo.insert(makeNegotiation({ id: 'c', initiator: 'alice', createdAt: at(2) }));
      await repo.insert(makeNegotiation({ id: 'b', initiator: 'bob', createdAt: at(1) }));
      await repo.insert(makeNegotiation({ id: 'a', initiator: 'alice', createdAt: at(1) }));
      await repo.insert(makeNegotiation({ id: 'd', initiator: 'alice', createdAt: at(0) }));

      expect((await repo.list()).map((n) => n.id)).toEqual(['d', 'a', 'b', 'c']);
      expect((await repo.list({})).map((n) => n.id)).toEqual(['d', 'a', 'b', 'c']);
      expect((await repo.list({ initiator: 'alice' })).map((n) => n.id)).toEqual(['d', 'a', 'c']);
      expect(await repo.list({ initiator: 'nobody' })).toEqual([]);
      expect((await repo.list())[0]).toStrictEqual(makeNegotiation({ id: 'd', initiator: 'alice', createdAt: at(0) }));
    });

    it('lists in pages: after a cursor (creation time and id), at most a limit, with filters by state and initiator', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      const states = ['Open', 'Concluded'] as const;
      for (let i = 0; i < 7; i++) {
        await repo.insert(
          makeNegotiation({
            id: `x${i}`,
            initiator: i % 3 === 0 ? 'bob' : 'alice',
            state: states[i % 2],
            createdAt: at(Math.floor(i / 2)),
          }),
        );
      }
      const ids = async (filter: Parameters<typeof repo.list>[0]) => (await repo.list(filter)).map((n) => n.id);
      expect(await ids({ limit: 3 })).toEqual(['x0', 'x1', 'x2']);
      // x1 and x0 share a creation time: the cursor's id tells them apart.
      expect(await ids({ limit: 3, after: { createdAt: at(0), id: 'x0' } })).toEqual(['x1', 'x2', 'x3']);
      expect(await ids({ limit: 10, after: { createdAt: at(3), id: 'x6' } })).toEqual([]);
      expect(await ids({ state: 'Concluded' })).toEqual(['x1', 'x3', 'x5']);
      expect(await ids({ state: 'Open', initiator: 'alice', limit: 1, after: { createdAt: at(1), id: 'x2' } })).toEqual(
        ['x4'],
      );
      expect(await ids({ limit: 0 })).toEqual([]);
      // Paging through returns every item once, in list order.
      const seen: string[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await repo.list({ limit: 2, ...(after ? { after } : {}) });
        if (page.length === 0) break;
        seen.push(...page.map((n) => n.id));
        const last = page.at(-1) as { createdAt: Date; id: string };
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(await ids({}));
    });

    it('lists only negotiations with a Held hold when asked, following updates', async () => {
      const at = (ms: number) => new Date(Date.UTC(2030, 5, 1) + ms);
      const held = (offerId: string) => makeOffer({ offerId, hold: makeHold() });
      const ended = (offerId: string) => makeOffer({ offerId, hold: makeHold({ state: 'Released', endedAt: at(9) }) });
      await repo.insert(makeNegotiation({ id: 'none', createdAt: at(0) }));
      await repo.insert(makeNegotiation({ id: 'ended', createdAt: at(1), offers: [ended('e-1'), makeOffer()] }));
      await repo.insert(makeNegotiation({ id: 'two-held', createdAt: at(3), offers: [held('h-1'), held('h-2')] }));
      await repo.insert(
        makeNegotiation({ id: 'bob-held', initiator: 'bob', createdAt: at(2), offers: [ended('e-2'), held('h-3')] }),
      );

      const ids = async (filter: Parameters<NegotiationRepository['list']>[0]) =>
        (await repo.list(filter)).map((n) => n.id);
      expect(await ids({ withLiveHolds: true })).toEqual(['bob-held', 'two-held']);
      expect(await ids({ withLiveHolds: true, initiator: 'bob' })).toEqual(['bob-held']);
      expect(await ids({ withLiveHolds: true, initiator: 'anonymous' })).toEqual(['two-held']);
      expect(await ids({ withLiveHolds: false })).toEqual(['none', 'ended', 'bob-held', 'two-held']);

      // One of two holds ends: still live. The last one ends: no longer. A new hold: live again.
      const twoHeld = (await repo.get('two-held'))!;
      twoHeld.offers[0]!.hold = { ...twoHeld.offers[0]!.hold!, state: 'Confirmed' };
      await repo.update(twoHeld);
      expect(await ids({ withLiveHolds: true })).toEqual(['bob-held', 'two-held']);
      twoHeld.offers[1]!.hold = { ...twoHeld.offers[1]!.hold!, state: 'Expired' };
      await repo.update(twoHeld);
      expect(await ids({ withLiveHolds: true })).toEqual(['bob-held']);
      await repo.update(makeNegotiation({ id: 'none', createdAt: at(0), offers: [held('h-4')] }));
      expect(await ids({ withLiveHolds: true })).toEqual(['none', 'bob-held']);
    });

    it('lists only negotiations with a Held hold expiring by a given time, following updates', async () => {
      const base = Date.UTC(2030, 5, 1);
      const at = (ms: number) => new Date(base + ms);
      const held = (offerId: string, expiresMs: number) =>
        makeOffer({ offerId, hold: makeHold({ expiresAt: at(expiresMs) }) });
      const released = (offerId: string, expiresMs: number) =>
        makeOffer({ offerId, hold: makeHold({ state: 'Released', expiresAt: at(expiresMs), endedAt: at(1) }) });
      await repo.insert(
        makeNegotiation({ id: 'early', createdAt: at(0), offers: [held('e-1', 60_000), held('e-2', 300_000)] }),
      );
      await repo.insert(makeNegotiation({ id: 'late', createdAt: at(1), offers: [held('l-1', 300_000)] }));
      // Its hold expired on paper but ended before: nothing to expire.
      await repo.insert(makeNegotiation({ id: 'ended', createdAt: at(2), offers: [released('x-1', 30_000)] }));
      await repo.insert(makeNegotiation({ id: 'none', createdAt: at(3) }));

      const due = async (ms: number) => (await repo.list({ holdExpiringBy: at(ms) })).map((n) => n.id);
      expect(await due(59_999)).toEqual([]);
      expect(await due(60_000)).toEqual(['early']);
      expect(await due(300_000)).toEqual(['early', 'late']);

      // The first hold ends: the negotiation is due when its second one expires.
      const early = (await repo.get('early'))!;
      early.offers[0]!.hold = { ...early.offers[0]!.hold!, state: 'Confirmed', endedAt: at(10) };
      await repo.update(early);
      expect(await due(60_000)).toEqual([]);
      expect(await due(300_000)).toEqual(['early', 'late']);
      // A new hold expiring sooner makes it due sooner.
      early.offers.push(held('e-3', 30_000));
      await repo.update(early);
      expect(await due(30_000)).toEqual(['early']);
    });

    it.each(['Open', 'Concluded'] as const)(
      'does not let callers mutate stored state through objects passed in or handed out (%s)',
      async (state) => {
        const original = makeFullNegotiation({ id: 'm-1', state });
        const inserted = structuredClone(original);
        await repo.insert(inserted);
        inserted.state = 'Terminated';
        inserted.offers.push(makeOffer({ offerId: 'evil' }));
        Object.assign(inserted.offers[1]!.hold!, { state: 'Released' }); // holds are readonly to the server; a careless caller may still write

        const got = await repo.get('m-1');
        if (got === undefined) throw new Error('m-1 missing');
        got.rounds = 99;
        got.offers[0]!.request.window!.start.setTime(0);
        got.offers[1]!.hold!.allocation.start.setTime(0);
        got.offers[1]!.price!.amount = 0;
        Object.assign(got.offers[2]!.hold!, { state: 'Confirmed' });

        const [listed] = await repo.list({ withLiveHolds: true });
        if (listed === undefined) throw new Error('list empty');
        listed.offers.length = 0;
        listed.expiresAt.setTime(0);

        expect(await repo.get('m-1')).toStrictEqual(original);
      },
    );
  });
}
