import { ShareExceeded } from './errors.js';
import { isoTime } from './time.js';
import { epochAt, type SharePolicy, type SitePolicy } from './vo-policy.js';

/** Who a booking is for: the VO and group its charge account names, and the initiator. */
export interface Owner {
  vo?: string;
  group?: string;
  user: string;
}

/** Capacity used or booked: `nodes` nodes from `start` to `end` (ms). */
export interface UsageItem {
  owner: Owner;
  nodes: number;
  start: number;
  end: number;
}

export interface ShareStanding {
  /** VO, VO/group or VO/group/user. */
  path: string;
  level: 'VO' | 'group' | 'user';
  limit: SharePolicy['limit'];
  /** Of the whole site, 0..1. */
  share: number;
  /** Node-seconds in the epoch. */
  entitled: number;
  used: number;
}

/**
 * The admission rule for VO usage SLAs (src/domain/vo-policy.ts): `request` (its pieces)
 * is checked in every epoch it touches, at the VO, the group and the user level that the
 * policy names, against what is used and booked there (`items`). Throws ShareExceeded
 * naming the level, its share, its usage and when room returns; a request that names no
 * VO is not limited by shares. Pure: `items` come from the plan and the usage records;
 * `now` is when the request arrives (an extensible share may use what no one else can still
 * claim from then on).
 */
export function checkShares(
  policy: SitePolicy,
  siteNodes: number,
  items: readonly UsageItem[],
  request: readonly UsageItem[],
  now = Number.NEGATIVE_INFINITY,
): void {
  const owner = request[0]?.owner;
  if (!owner?.vo) return;
  const vo = policy.vos.find((v) => v.name === owner.vo);
  if (!vo)
    throw new ShareExceeded(
      `VO "${owner.vo}" has no share at this site: its usage policy grants shares to ` +
        `${policy.vos.map((v) => v.name).join(', ') || 'no VO'}`,
    );
  const group = owner.group !== undefined ? vo.groups.find((g) => g.name === owner.group) : undefined;
  const user = group?.users.find((u) => u.name === owner.user);
  const epochs = new Map<number, { start: number; end: number }>();
  for (const piece of request) {
    for (let t = epochAt(policy, piece.start).start; t < piece.end; t = epochAt(policy, t).end)
      epochs.set(t, epochAt(policy, t));
  }
  for (const epoch of epochs.values()) {
    const capacity = (siteNodes * (epoch.end - epoch.start)) / 1000;
    const within = (list: readonly UsageItem[]) => list.reduce((sum, i) => sum + nodeSeconds(i, epoch), 0);
    const wanted = within(request);
    // Capacity nobody else is entitled to: from now to the epoch's end, what is free once every
    // other VO's entitlement to that time, less what it has booked there, is set aside.
    const ahead = { start: Math.max(epoch.start, Math.min(now, epoch.end)), end: epoch.end };
    const aheadCapacity = (siteNodes * (ahead.end - ahead.start)) / 1000;
    // One pass over the items: what each VO has booked from now to the epoch's end.
    const bookedBy = new Map<string | undefined, number>();
    for (const i of items) bookedBy.set(i.owner.vo, (bookedBy.get(i.owner.vo) ?? 0) + nodeSeconds(i, ahead));
    const othersUnused = policy.vos
      .filter((v) => v.name !== vo.name)
      .reduce((sum, v) => sum + Math.max(0, v.share * aheadCapacity - (bookedBy.get(v.name) ?? 0)), 0);
    const idle = aheadCapacity - [...bookedBy.values()].reduce((a, b) => a + b, 0) - othersUnused;
    const levels: Array<{
      policy: SharePolicy;
      level: ShareStanding['level'];
      path: string;
      share: number;
      mine: (o: Owner) => boolean;
    }> = [{ policy: vo, level: 'VO', path: vo.name, share: vo.share, mine: (o) => o.vo === vo.name }];
    if (group)
      levels.push({
        policy: group,
        level: 'group',
        path: `${vo.name}/${group.name}`,
        share: vo.share * group.share,
        mine: (o) => o.vo === vo.name && o.group === group.name,
      });
    if (group && user)
      levels.push({
        policy: user,
        level: 'user',
        path: `${vo.name}/${group.name}/${user.name}`,
        share: vo.share * group.share * user.share,
        mine: (o) => o.vo === vo.name && o.group === group.name && o.user === user.name,
      });
    for (const l of levels) {
      const mine = items.filter((i) => l.mine(i.owner));
      const used = within(mine);
      const entitled = l.share * capacity;
      // A burst limit caps the width at all times (GRUBER: BA_i + J < R_burst), within the share or beyond it.
      const burst = l.policy.limit === 'burst' ? l.policy.burst : undefined;
      const tooWide = burst !== undefined && peakNodes([...mine, ...request], request) > burst.share * siteNodes + 1e-6;
      if (!tooWide && used + wanted <= entitled + 1e-6) continue;
      if (l.policy.limit === 'extensible' && wanted <= idle + 1e-6) continue;
      if (burst && !tooWide && used + wanted <= entitled + (burst.share - l.share) * siteNodes * burst.seconds + 1e-6)
        continue;
      const hours = (s: number) => `${(s / 3600).toFixed(1)} node-hours`;
      const how =
        l.policy.limit === 'fixed'
          ? 'a fixed limit'
          : l.policy.limit === 'extensible'
            ? 'an extensible limit, and the site has no capacity nobody else is entitled to for it'
            : `a burst limit (up to ${Math.round((burst?.share ?? 0) * 100)} % of the nodes at once, for ` +
              `${burst?.seconds ?? 0} s beyond the share), which it would pass${tooWide ? ' in width' : ''}`;
      throw new ShareExceeded(
        `${l.level} "${l.path}" is over its share: ${(l.share * 100).toFixed(1)} % of the site in the epoch ` +
          `from ${isoTime(new Date(epoch.start))} to ${isoTime(new Date(epoch.end))} is ${hours(entitled)}, ` +
          `of which ${hours(used)} are used or booked; this request needs ${hours(wanted)} more, and its ` +
          `share is ${how}; room returns at ${isoTime(new Date(epoch.end))}, when the next epoch begins`,
        new Date(epoch.end),
      );
    }
  }
}

/** What each level of the policy is entitled to and uses in the epoch holding `at` (for `wsag vo`). */
export function standings(
  policy: SitePolicy,
  siteNodes: number,
  items: readonly UsageItem[],
  at: number,
): { epoch: { start: number; end: number }; shares: ShareStanding[] } {
  const epoch = epochAt(policy, at);
  const capacity = (siteNodes * (epoch.end - epoch.start)) / 1000;
  const used = (mine: (o: Owner) => boolean) =>
    items.filter((i) => mine(i.owner)).reduce((sum, i) => sum + nodeSeconds(i, epoch), 0);
  const shares: ShareStanding[] = [];
  for (const vo of policy.vos) {
    shares.push({
      path: vo.name,
      level: 'VO',
      limit: vo.limit,
      share: vo.share,
      entitled: vo.share * capacity,
      used: used((o) => o.vo === vo.name),
    });
    for (const g of vo.groups) {
      const gShare = vo.share * g.share;
      shares.push({
        path: `${vo.name}/${g.name}`,
        level: 'group',
        limit: g.limit,
        share: gShare,
        entitled: gShare * capacity,
        used: used((o) => o.vo === vo.name && o.group === g.name),
      });
      for (const u of g.users) {
        const uShare = gShare * u.share;
        shares.push({
          path: `${vo.name}/${g.name}/${u.name}`,
          level: 'user',
          limit: u.limit,
          share: uShare,
          entitled: uShare * capacity,
          used: used((o) => o.vo === vo.name && o.group === g.name && o.user === u.name),
        });
      }
    }
  }
  return { epoch, shares };
}

/** The node-seconds `item` uses within `period` (ms). */
export function nodeSeconds(item: UsageItem, period: { start: number; end: number }): number {
  const from = Math.max(item.start, period.start);
  const to = Math.min(item.end, period.end);
  return to > from ? (item.nodes * (to - from)) / 1000 : 0;
}

/** The most nodes `items` hold at once during the request's pieces. */
function peakNodes(items: readonly UsageItem[], request: readonly UsageItem[]): number {
  let peak = 0;
  for (const piece of request) {
    const points = [piece.start, ...items.map((i) => i.start).filter((t) => t > piece.start && t < piece.end)];
    for (const t of points)
      peak = Math.max(
        peak,
        items.filter((i) => i.start <= t && i.end > t).reduce((sum, i) => sum + i.nodes, 0),
      );
  }
  return peak;
}
