import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidTerms, ShareExceeded } from '../../src/domain/errors.js';
import { epochAt, parseSitePolicy } from '../../src/domain/vo-policy.js';
import { checkShares, type UsageItem } from '../../src/domain/vo-shares.js';

const h = 3_600_000;
const t0 = Date.UTC(2026, 10, 23);
const policy = parseSitePolicy(
  {
    epochStart: new Date(t0).toISOString(),
    epochSeconds: 86_400,
    vos: [
      {
        name: 'hep',
        share: 0.5,
        limit: 'burst',
        burst: { share: 0.75, seconds: 3600 },
        groups: [
          { name: 'atlas', share: 0.5, limit: 'fixed', users: [{ name: '/CN=alice', share: 0.5, limit: 'fixed' }] },
        ],
      },
    ],
  },
  'policy.json',
);
const item = (user: string, nodes: number, from: number, to: number, group = 'atlas'): UsageItem => ({
  owner: { vo: 'hep', group, user },
  nodes,
  start: t0 + from * h,
  end: t0 + to * h,
});
const refusal = (items: UsageItem[], request: UsageItem[]) => {
  try {
    checkShares(policy, 8, items, request);
  } catch (error) {
    return error as Error;
  }
  return undefined;
};

describe('VO usage SLAs (pure)', () => {
  it('checks the group and the user within their VO: shares of shares', () => {
    // The site is 192 node-hours a day: hep 96, atlas 48, alice 24.
    expect(refusal([item('/CN=alice', 4, 0, 5)], [item('/CN=alice', 4, 5, 6)])).toBeUndefined(); // 24 of 24
    const user = refusal([item('/CN=alice', 4, 0, 6)], [item('/CN=alice', 1, 6, 7)]);
    expect(user).toBeInstanceOf(ShareExceeded);
    expect(user?.message).toMatch(/^user "hep\/atlas\/\/CN=alice" is over its share: 12\.5 % of the site/);
    const group = refusal([item('/CN=bob', 4, 0, 12)], [item('/CN=bob', 1, 12, 13)]);
    expect(group?.message).toMatch(/^group "hep\/atlas" is over its share: 25\.0 % of the site/);
    // Outside any group the VO's share counts, with its burst.
    expect(refusal([item('/CN=carl', 4, 0, 24, 'cms')], [item('/CN=carl', 1, 0, 2, 'cms')])).toBeUndefined(); // 96 + 2 <= 96 + (75 % - 50 %) x 8 nodes x 1 h
  });

  it('a burst never takes more than its share of the nodes at once, within its share or beyond', () => {
    expect(refusal([item('/CN=carl', 4, 0, 1, 'cms')], [item('/CN=carl', 3, 0, 1, 'cms')])?.message).toMatch(
      /which it would pass in width;/,
    );
    const wide = refusal([item('/CN=carl', 4, 0, 24, 'cms')], [item('/CN=carl', 3, 0, 0.5, 'cms')]); // 1.5 node-hours, but 7 nodes at once > 6
    expect(wide?.message).toMatch(
      /burst limit \(up to 75 % of the nodes at once, for 3600 s beyond the share\), which it would pass in width;/,
    );
  });

  it('a VO the policy does not name has no share; a request without a VO is not limited', () => {
    expect(() =>
      checkShares(policy, 8, [], [{ owner: { vo: 'bio', user: 'x' }, nodes: 1, start: t0, end: t0 + h }]),
    ).toThrow('VO "bio" has no share at this site: its usage policy grants shares to hep');
    expect(() =>
      checkShares(policy, 8, [], [{ owner: { user: 'x' }, nodes: 8, start: t0, end: t0 + 48 * h }]),
    ).not.toThrow();
  });

  it('a request across two epochs is checked in each', () => {
    const refused = refusal([item('/CN=carl', 4, 24, 48, 'cms')], [item('/CN=carl', 2, 20, 26, 'cms')]);
    expect(refused?.message).toContain('in the epoch from 2026-11-24T00:00:00Z to 2026-11-25T00:00:00Z');
    expect(epochAt(policy, t0 + 25 * h)).toEqual({ start: t0 + 24 * h, end: t0 + 48 * h });
  });

  it('the shipped example policy reads', () => {
    const file = path.resolve(import.meta.dirname, '../../examples/vo-policy.json');
    const example = parseSitePolicy(JSON.parse(fs.readFileSync(file, 'utf8')), file);
    expect(example.vos.map((v) => [v.name, v.limit])).toEqual([
      ['atlas', 'extensible'],
      ['astro', 'burst'],
      ['bio', 'fixed'],
    ]);
    expect(example.vos[0]?.groups[1]?.users[0]?.name).toBe('/C=DE/O=GridGermany/CN=Alice');
  });

  it('a policy file with a mistake is refused naming where', () => {
    const bad = (json: unknown) => () => parseSitePolicy(json, 'vo.json');
    expect(bad({ epochSeconds: 10, vos: [] })).toThrow(
      new InvalidTerms('vo.json: epochSeconds: a whole number of seconds from 60 to a year (604800 is a week)'),
    );
    expect(
      bad({
        epochSeconds: 3600,
        vos: [
          { name: 'a', share: 0.7 },
          { name: 'b', share: 0.4 },
        ],
      }),
    ).toThrow('vo.json: the site: the shares add up to 110 %, more than all of it');
    expect(bad({ epochSeconds: 3600, vos: [{ name: 'a', share: 0.5, limit: 'burst' }] })).toThrow(
      'vo.json: vos[0] "a" burst: must be an object',
    );
    expect(bad({ epochSeconds: 3600, vos: [{ name: 'a', share: 0.5, limit: 'soft' }] })).toThrow(
      'vo.json: vos[0] "a": "limit" must be one of fixed, extensible, burst',
    );
  });
});
