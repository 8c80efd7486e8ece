import { InvalidTerms } from './errors.js';

/**
 * VO usage SLAs (Dumitrescu 2007's GRUBER uSLAs): the site grants each virtual
 * organisation a share of its capacity over an epoch, each group a share of its VO's, each
 * user a share of the group's. Every share has a limit kind:
 * - fixed: a hard cap (GRUBER's fixed-limit: C_i + J <= R_i);
 * - extensible: the cap holds only under contention: beyond it a job is admitted if it fits
 *   in capacity nobody else is entitled to (GRUBER's extensible-limit, in planning terms);
 * - burst: beyond the cap by a bounded amount for a bounded time (GRUBER's commitment
 *   limit): at most `burst.share` of the site's nodes at once, and at most
 *   (burst.share - share) x nodes x burst.seconds node-seconds above the cap per epoch.
 */
export type LimitKind = 'fixed' | 'extensible' | 'burst';
export const limitKinds: readonly LimitKind[] = ['fixed', 'extensible', 'burst'];

export interface SharePolicy {
  name: string;
  /** Of the level above (the site for a VO, the VO for a group, the group for a user), 0..1. */
  share: number;
  limit: LimitKind;
  burst?: { share: number; seconds: number };
}

export interface GroupPolicy extends SharePolicy {
  users: SharePolicy[];
}

export interface VoPolicy extends SharePolicy {
  groups: GroupPolicy[];
}

export interface SitePolicy {
  /** Epochs are [epochStart + k x epochSeconds, ...). */
  epochStart: Date;
  epochSeconds: number;
  vos: VoPolicy[];
}

/** The policy file's JSON, checked: every mistake named with where it is. */
export function parseSitePolicy(json: unknown, source: string): SitePolicy {
  const fail = (where: string, what: string): never => {
    throw new InvalidTerms(`${source}: ${where}: ${what}`);
  };
  const object = (value: unknown, where: string): Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : fail(where, 'must be an object');
  const root = object(json, 'the policy');
  const epochSeconds = root.epochSeconds;
  if (
    typeof epochSeconds !== 'number' ||
    !Number.isInteger(epochSeconds) ||
    epochSeconds < 60 ||
    epochSeconds > 366 * 86_400
  )
    fail('epochSeconds', 'a whole number of seconds from 60 to a year (604800 is a week)');
  const epochStart = new Date(typeof root.epochStart === 'string' ? root.epochStart : '2026-01-05T00:00:00Z');
  if (Number.isNaN(epochStart.getTime())) fail('epochStart', 'an ISO 8601 time such as 2026-01-05T00:00:00Z');
  const share = (
    value: unknown,
    where: string,
    children?: { key: string; parse: (v: unknown, w: string) => unknown },
  ): SharePolicy & Record<string, unknown> => {
    const o = object(value, where);
    if (typeof o.name !== 'string' || o.name.trim() === '') fail(where, 'needs a "name"');
    const at = `${where} "${o.name as string}"`;
    if (typeof o.share !== 'number' || !(o.share >= 0 && o.share <= 1))
      fail(at, '"share" must be a number from 0 to 1');
    const limit = o.limit ?? 'fixed';
    if (!limitKinds.includes(limit as LimitKind)) fail(at, `"limit" must be one of ${limitKinds.join(', ')}`);
    const result: SharePolicy & Record<string, unknown> = {
      name: (o.name as string).trim(),
      share: o.share as number,
      limit: limit as LimitKind,
    };
    if (limit === 'burst') {
      const b = object(o.burst, `${at} burst`);
      if (typeof b.share !== 'number' || !(b.share >= (o.share as number) && b.share <= 1))
        fail(`${at} burst`, '"share" must lie between the share and 1');
      if (typeof b.seconds !== 'number' || !(b.seconds > 0)) fail(`${at} burst`, '"seconds" must be a positive number');
      result.burst = { share: b.share as number, seconds: b.seconds as number };
    } else if (o.burst !== undefined) fail(at, '"burst" belongs to limit "burst" only');
    if (children) {
      const list = o[children.key] ?? [];
      if (!Array.isArray(list)) fail(at, `"${children.key}" must be a list`);
      result[children.key] = (list as unknown[]).map((c, i) => children.parse(c, `${at} ${children.key}[${i}]`));
      siblings(result[children.key] as SharePolicy[], at, fail);
    }
    return result;
  };
  const user = (v: unknown, w: string) => share(v, w);
  const group = (v: unknown, w: string) => share(v, w, { key: 'users', parse: user });
  const vo = (v: unknown, w: string) => share(v, w, { key: 'groups', parse: group });
  if (!Array.isArray(root.vos)) fail('vos', 'must be a list of VOs');
  const vos = (root.vos as unknown[]).map((v, i) => vo(v, `vos[${i}]`)) as unknown as VoPolicy[];
  siblings(vos, 'the site', fail);
  return { epochStart, epochSeconds: epochSeconds as number, vos };
}

function siblings(list: readonly SharePolicy[], where: string, fail: (where: string, what: string) => never): void {
  const names = new Set<string>();
  for (const s of list) {
    if (names.has(s.name)) fail(where, `"${s.name}" is named twice`);
    names.add(s.name);
  }
  const total = list.reduce((sum, s) => sum + s.share, 0);
  if (total > 1 + 1e-9) fail(where, `the shares add up to ${Math.round(total * 1000) / 10} %, more than all of it`);
}

/** The epoch holding `t` (ms): its start and end (ms). */
export function epochAt(policy: SitePolicy, t: number): { start: number; end: number } {
  const length = policy.epochSeconds * 1000;
  const k = Math.floor((t - policy.epochStart.getTime()) / length);
  const start = policy.epochStart.getTime() + k * length;
  return { start, end: start + length };
}
