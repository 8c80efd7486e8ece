import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MachineManager } from '../../src/scheduler/machine-manager.js';
import type { ClusterNode } from '../../src/scheduler/model.js';

/**
 * Slot searches remember, per node, what its timeline answered (free-stretch-memo.ts) and
 * pass nodes free for good from their last booking's end. Over random bookings, releases,
 * cuts, soft/firm changes and rolled-back trials, every search must answer exactly what the
 * same search answers on a fresh Machine Manager holding the same bookings, which has
 * nothing to remember.
 */

const nodes: ClusterNode[] = Array.from({ length: 6 }, (_, i) => ({
  id: `n${i}`,
  cpus: 1,
  memoryGB: 1,
  island: i < 3 ? 'a' : 'b',
}));

type Op =
  | { type: 'book'; owner: number; nodes: number[]; start: number; length: number }
  | { type: 'unbook'; owner: number; from: number }
  | { type: 'soft'; owner: number; soft: boolean }
  | { type: 'trial'; owner: number; node: number; start: number; length: number }
  | {
      type: 'search';
      count: number;
      start: number;
      duration: number;
      soft: boolean;
      oneIsland: boolean;
      steps: number;
    };

// Few durations and instants, so searches meet what earlier ones remembered.
const time = fc.integer({ min: 0, max: 60 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('book' as const),
      owner: fc.nat(12),
      nodes: fc.uniqueArray(fc.nat(5), { minLength: 1, maxLength: 3 }),
      start: time,
      length: fc.integer({ min: 1, max: 40 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('unbook' as const),
      owner: fc.nat(12),
      from: fc.integer({ min: -1, max: 200 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('soft' as const), owner: fc.nat(12), soft: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('trial' as const),
      owner: fc.nat(12),
      node: fc.nat(5),
      start: time,
      length: fc.integer({ min: 1, max: 40 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('search' as const),
      count: fc.integer({ min: 1, max: 4 }),
      start: time,
      duration: fc.constantFrom(5, 20),
      soft: fc.boolean(),
      oneIsland: fc.boolean(),
      steps: fc.integer({ min: 1, max: 6 }),
    }),
  },
);

/**
 * The answers of a search walked forward the way findSlot walks it: each answer's lower
 * bound is the next instant asked. Over `list` (default: a list of its own, so the search
 * looks at every node) and, with `meanwhile`, another search made after the first answer.
 */
function walk(
  mm: MachineManager,
  q: Extract<Op, { type: 'search' }>,
  list: readonly number[] = nodes.map((_, i) => i),
  meanwhile?: () => void,
): unknown[] {
  const search = mm.search(q.count, list, q.duration, { soft: q.soft, oneIsland: q.oneIsland });
  const answers: unknown[] = [];
  let t = q.start;
  for (let step = 0; step < q.steps && Number.isFinite(t); step++) {
    const answer = search.at(t);
    answers.push(answer);
    if ('nodes' in answer) break;
    t = answer.next;
    if (step === 0) meanwhile?.();
  }
  // Done, as findSlot marks it: the next search reuses its arrays, left as this one wrote them.
  search.done();
  return answers;
}

/** A Machine Manager holding `mm`'s bookings and soft owners, built afresh. */
function replayed(mm: MachineManager, owners: number): MachineManager {
  const fresh = new MachineManager(nodes);
  for (let o = 0; o <= owners; o++) {
    const owner = `j${o}`;
    if (mm.isSoft(owner)) fresh.setSoft(owner, true);
    for (const b of mm.bookingsOf(owner)) fresh.book(owner, [b.node], b.start, b.end);
  }
  return fresh;
}

describe('slot searches against a fresh Machine Manager', () => {
  it('a search made while another runs has arrays of its own; one asked after it is done refuses', () => {
    const mm = new MachineManager(nodes);
    mm.book('j0', [0, 1, 2], 0, 30);
    const all = nodes.map((_, i) => i);
    const outer = mm.search(4, all, 10);
    expect(outer.at(0)).toEqual({ next: 30 });
    // A caller's callback searching in the middle of a search (findSlot's accept).
    const inner = mm.search(2, all, 10);
    expect(inner.at(0)).toEqual({ nodes: [3, 4] });
    inner.done();
    expect(outer.at(30)).toEqual({ nodes: [0, 1, 2, 3] });
    outer.done();
    expect(() => outer.at(30)).toThrow(/asked after it was done/);
  });

  it('a search in one island for several nodes, past blocks known to be busy, answers as one that looks at every node', () => {
    // Two islands of four nodes, blocks of two; island a's nodes busy from 0 to 10, 15, 20, 25, island b's to 50, 55, 60, 65.
    const cluster: ClusterNode[] = Array.from({ length: 8 }, (_, i) => ({
      id: `m${i}`,
      cpus: 1,
      memoryGB: 1,
      island: i < 4 ? 'a' : 'b',
    }));
    const withBlocks = new MachineManager(cluster, 2);
    const fresh = new MachineManager(cluster);
    for (const mm of [withBlocks, fresh])
      cluster.forEach((_, i) => mm.book(`j${i}`, [i], 0, (i < 4 ? 10 : 30) + 5 * i));
    const list = withBlocks.eligible({}, true);
    // A first search learns every block: no node is free before 10.
    const first = withBlocks.search(1, list, 5);
    expect(first.at(0)).toEqual({ next: 10 });
    first.done();
    // Another search (a list of its own, another duration) leaves other numbers in the arrays the next search takes.
    const other = withBlocks.search(1, [4, 5, 6, 7], 30);
    expect(other.at(0)).toEqual({ next: 50 });
    other.done();
    const answers = (mm: MachineManager, eligible: readonly number[]) => {
      const search = mm.search(3, eligible, 5, { oneIsland: true });
      const found = [search.at(0), search.at(20)];
      search.done();
      return found;
    };
    // Island a has its third node free at 20 (island b at 40); at 20 its nodes that ended last come first.
    expect(answers(withBlocks, list)).toEqual([{ next: 20 }, { nodes: [2, 1, 0] }]);
    expect(answers(withBlocks, list)).toEqual(
      answers(
        fresh,
        cluster.map((_, i) => i),
      ),
    );
  });

  it('a block learnt busy is looked at again once a booking of one of its nodes changes', () => {
    const cluster: ClusterNode[] = Array.from({ length: 8 }, (_, i) => ({ id: `m${i}`, cpus: 1, memoryGB: 1 }));
    const mm = new MachineManager(cluster, 2);
    cluster.forEach((_, i) => mm.book(`j${i}`, [i], 0, 100 + i));
    const list = mm.eligible({}, true);
    const earliest = () => {
      const search = mm.search(1, list, 10);
      const answer = search.at(0);
      search.done();
      return answer;
    };
    expect(earliest()).toEqual({ next: 100 });
    mm.unbook('j5', 50); // node 5 free from 50
    expect(earliest()).toEqual({ next: 50 });
    mm.unbook('j3'); // node 3 free now
    expect(earliest()).toEqual({ nodes: [3] });
  });

  it('answer the same after any history of changes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 20, maxLength: 80 }), fc.boolean(), (ops, nested) => {
        // Blocks of two positions (FreeStretchBlocks) over the list the Machine Manager hands out.
        const mm = new MachineManager(nodes, 2);
        const list = mm.eligible({}, true);
        for (const o of ops) {
          const owner = 'owner' in o ? `j${o.owner}` : '';
          if (o.type === 'book') {
            if (mm.bookingsOf(owner).length > 0) continue; // one placement per job, as the plan books them
            const free = o.nodes.filter((n) => mm.isFree(n, o.start, o.start + o.length));
            mm.book(owner, free, o.start, o.start + o.length);
          } else if (o.type === 'unbook') {
            mm.unbook(owner, o.from);
          } else if (o.type === 'soft') {
            mm.setSoft(owner, o.soft);
          } else if (o.type === 'trial') {
            // A trial the plan rolls back: the memo must not keep what the trial showed.
            const mark = mm.begin();
            if (mm.isFree(o.node, o.start, o.start + o.length))
              mm.book(`trial-${o.owner}`, [o.node], o.start, o.start + o.length);
            walk(mm, {
              type: 'search',
              count: 1,
              start: o.start,
              duration: 5,
              soft: false,
              oneIsland: false,
              steps: 3,
            });
            mm.rollback(mark);
          } else {
            // Meanwhile: a search for another duration and softness, which the memo then holds (findSlot's accept may search).
            const other = { ...o, duration: o.duration === 5 ? 20 : 5, soft: !o.soft, count: 1, steps: 2 };
            const meanwhile = nested ? () => void walk(mm, other, list) : undefined;
            expect(walk(mm, o, list, meanwhile)).toEqual(walk(replayed(mm, 12), o));
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
