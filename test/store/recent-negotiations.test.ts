import { describe, expect, it } from 'vitest';
import { plainCopy } from '../../src/store/plain-copy.js';
import { RecentNegotiations } from '../../src/store/recent-negotiations.js';
import { makeFullNegotiation, makeNegotiation } from './fixtures/make-negotiation.js';

/** Every object reachable from `value`, itself included. */
function objectsIn(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value !== 'object' || value === null || found.has(value)) return found;
  found.add(value);
  for (const member of Object.values(value)) objectsIn(member, found);
  return found;
}

describe('plainCopy', () => {
  it('copies a negotiation as structuredClone does, sharing no object with it', () => {
    const negotiation = makeFullNegotiation({ state: 'Open' });
    const copy = plainCopy(negotiation);
    expect(copy).toStrictEqual(structuredClone(negotiation));
    const originals = objectsIn(negotiation);
    for (const object of objectsIn(copy)) expect(originals.has(object)).toBe(false);
    expect(copy.offers[1]?.hold?.allocation.start).toBeInstanceOf(Date);
  });

  it('leaves out members whose value is undefined, as a stored row does', () => {
    const copy = plainCopy({ a: 1, b: undefined, c: { d: undefined, e: [1, { f: undefined }] } });
    expect(copy).toStrictEqual({ a: 1, c: { e: [1, {}] } });
    expect('b' in copy).toBe(false);
  });

  it('hands what is not plain data to structuredClone whole', () => {
    const map = new Map([['k', new Date(5)]]);
    const copy = plainCopy({ map });
    expect(copy.map).toBeInstanceOf(Map);
    expect(copy.map).not.toBe(map);
    expect(copy.map.get('k')).toEqual(new Date(5));
  });
});

describe('RecentNegotiations', () => {
  it('keeps open negotiations as written and forgets one that is no longer open', () => {
    const recent = new RecentNegotiations();
    const open = makeNegotiation({ id: 'n-1', rounds: 1 });
    recent.written(open);
    expect(recent.get('n-1')).toStrictEqual(open);
    expect(recent.storedOfferIds('n-1')).toEqual(new Set());
    recent.written({ ...open, state: 'Concluded' });
    expect(recent.get('n-1')).toBeUndefined();
    expect(recent.storedOfferIds('n-1')).toBeUndefined();
  });

  it('lets the least recently written go beyond its capacity', () => {
    const recent = new RecentNegotiations(2);
    for (const id of ['a', 'b', 'c']) recent.written(makeNegotiation({ id }));
    recent.written(makeNegotiation({ id: 'b', rounds: 2 })); // written again: now the most recent
    recent.written(makeNegotiation({ id: 'd' }));
    expect(['a', 'b', 'c', 'd'].filter((id) => recent.get(id) !== undefined)).toEqual(['b', 'd']);
    expect(recent.size).toBe(2);
  });

  it('hands out copies: changing what was written or read changes nothing kept', () => {
    const recent = new RecentNegotiations();
    const written = makeFullNegotiation({ id: 'n-2', state: 'Open' });
    const original = structuredClone(written);
    recent.written(written);
    written.offers[0]!.request.window!.start.setTime(0);
    const read = recent.get('n-2')!;
    read.offers.length = 0;
    read.expiresAt.setTime(0);
    expect(recent.get('n-2')).toStrictEqual(original);
  });

  it('forgets an entry on request (a write whose commit failed)', () => {
    const recent = new RecentNegotiations();
    recent.written(makeNegotiation({ id: 'n-3' }));
    recent.forget('n-3');
    expect(recent.get('n-3')).toBeUndefined();
  });
});
