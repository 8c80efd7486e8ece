import { describe, expect, it } from 'vitest';
import { nodeList, noNodes } from '../../src/scheduler/model.js';
import { SharedValues } from '../../src/scheduler/shared-values.js';

describe('SharedValues', () => {
  it('gives equal values one frozen instance, frozen to the leaves', () => {
    const shared = new SharedValues<{ cpus?: number; hosts?: string[] }>();
    const first = shared.shared({ cpus: 4, hosts: ['a', 'b'] });
    const second = shared.shared({ cpus: 4, hosts: ['a', 'b'] });
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.hosts)).toBe(true);
    expect(shared.shared({ cpus: 8, hosts: ['a', 'b'] })).not.toBe(first);
    expect(shared.shared({ cpus: 4, hosts: ['a'] })).not.toBe(first);
  });

  it('tells Infinity from NaN (JSON writes both as null)', () => {
    const shared = new SharedValues<{ seconds: number }>();
    const infinite = shared.shared({ seconds: Number.POSITIVE_INFINITY });
    const unknown = shared.shared({ seconds: Number.NaN });
    expect(unknown).not.toBe(infinite);
    expect(infinite.seconds).toBe(Number.POSITIVE_INFINITY);
  });

  it('stops sharing past its limit: new values come back as they are, unfrozen', () => {
    const shared = new SharedValues<{ n: number }>(2);
    const kept = [shared.shared({ n: 1 }), shared.shared({ n: 2 })];
    const third = { n: 3 };
    expect(shared.shared(third)).toBe(third);
    expect(Object.isFrozen(third)).toBe(false);
    expect(shared.shared({ n: 1 })).toBe(kept[0]);
  });
});

describe('nodeList', () => {
  it('shares the list of no node and of one node, and keeps longer lists as given', () => {
    expect(nodeList([])).toBe(noNodes);
    const one = nodeList(['n001']);
    expect(nodeList(['n001'])).toBe(one);
    expect(Object.isFrozen(one)).toBe(true);
    expect(nodeList(['n002'])).toEqual(['n002']);
    const two = ['n001', 'n002'];
    expect(nodeList(two)).toBe(two);
  });
});
