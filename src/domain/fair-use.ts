import { FairUseExceeded } from './errors.js';

/**
 * Fair use (docs/security.md, "Fair use"): what one party may hold of a site that belongs to
 * all. Each limit is per identity; operators are exempt by role. A limit left out is not
 * enforced.
 */
export interface FairUseLimits {
  /** The most of the site's SLA nodes one party's bookings take at any instant, 0 to 1. */
  share?: number;
  /** The most node-hours one party holds from now on (every booking's remaining nodes x hours). */
  nodeHours?: number;
  /** The most agreements (Observed or Pending) holding capacity at once. */
  agreements?: number;
  /** The most Pending agreements at once. */
  pending?: number;
  /** A Pending agreement no operator decided within this many seconds is Rejected and its capacity freed. */
  pendingSeconds?: number;
  /** The most open negotiations at once. */
  negotiations?: number;
  /** The most checkpoint bytes stored for one party's agreements. */
  checkpointBytes?: number;
}

/** The limits a refusal can name; `/metrics` counts refusals by them. */
export type FairUseLimit = Exclude<keyof FairUseLimits, 'pendingSeconds'>;
export const fairUseLimitNames: readonly FairUseLimit[] = [
  'share',
  'nodeHours',
  'agreements',
  'pending',
  'negotiations',
  'checkpointBytes',
];

const hour = 3600_000;

/**
 * The defaults: no party holds more than half the SLA nodes at any instant, nor more than
 * half the site for a week ahead; 200 agreements, 20 pending for an hour each, 20
 * negotiations and 8 GiB of checkpoints.
 */
export function defaultFairUse(slaNodes: number): FairUseLimits {
  return {
    share: 0.5,
    nodeHours: Math.ceil(0.5 * slaNodes * 7 * 24),
    agreements: 200,
    pending: 20,
    pendingSeconds: 3600,
    negotiations: 20,
    checkpointBytes: 8 * 1024 ** 3,
  };
}

const keys: ReadonlyArray<keyof FairUseLimits> = [
  'share',
  'nodeHours',
  'agreements',
  'pending',
  'pendingSeconds',
  'negotiations',
  'checkpointBytes',
];

/**
 * Reads `off`, or comma-separated NAME=VALUE pairs over the defaults (e.g.
 * `share=0.25,agreements=50`); a value `off` drops that limit. An error names what is wrong.
 */
export function parseFairUse(text: string, defaults: FairUseLimits): FairUseLimits | { error: string } {
  if (text.trim() === 'off') return {};
  const limits: FairUseLimits = { ...defaults };
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value] = pair.split('=').map((p) => p.trim());
    const key = keys.find((k) => k === name);
    if (!key || value === undefined)
      return { error: `"${pair}" is not NAME=VALUE with NAME one of ${keys.join(', ')} (or the whole value "off")` };
    if (value === 'off') {
      delete limits[key];
      continue;
    }
    const number = Number(value);
    const valid = key === 'share' ? number > 0 && number <= 1 : Number.isInteger(number) && number >= 1;
    if (!valid)
      return {
        error:
          `${key} must be ` +
          `${key === 'share' ? 'a fraction greater than 0 and at most 1' : 'a whole number of at least 1'} ` +
          `(or off), got "${value}"`,
      };
    limits[key] = number;
  }
  return limits;
}

/** One booking of a party, as the plan has it. */
export interface HeldBooking {
  start: number;
  end: number;
  nodes: number;
}

/** What a party holds, for the checks at admission. */
export interface PartyHoldings {
  bookings: readonly HeldBooking[];
  /** Agreements holding capacity, and of them those Pending. */
  agreements: number;
  pending: number;
}

/**
 * Throws FairUseExceeded when `party`, which holds `held`, may not add `wanted`
 * (`pending`: the new agreement waits for the provider's decision). `slaNodes` is the
 * site's capacity for SLA work.
 */
export function checkFairUse(
  limits: FairUseLimits,
  party: string,
  held: PartyHoldings,
  wanted: HeldBooking,
  options: { now: number; slaNodes: number; agreement: boolean; pending: boolean },
): void {
  const { now, slaNodes } = options;
  const setting = 'WSAG_FAIR_USE';
  if (options.pending && limits.pending !== undefined && held.pending + 1 > limits.pending) {
    throw new FairUseExceeded(
      `${party} already has ${held.pending} pending agreements waiting for the provider's decision, the most ` +
        `one party may have at once (pending=${limits.pending} in ${setting}): wait for a decision or terminate one`,
      'pending',
    );
  }
  if (options.agreement && limits.agreements !== undefined && held.agreements + 1 > limits.agreements) {
    throw new FairUseExceeded(
      `${party} already has ${held.agreements} agreements holding capacity, the most one party may have at ` +
        `once (agreements=${limits.agreements} in ${setting}): terminate one first`,
      'agreements',
    );
  }
  if (limits.share !== undefined) {
    const most = Math.max(1, Math.floor(limits.share * slaNodes));
    const peak = peakNodes(held.bookings, wanted);
    if (peak.nodes > most) {
      throw new FairUseExceeded(
        `${party} would hold ${peak.nodes} of the site's ${slaNodes} SLA nodes at ` +
          `${new Date(peak.at).toISOString()}; one party holds at most ${most} at any time (share=` +
          `${limits.share} in ${setting}): ask for fewer nodes or another time`,
        'share',
      );
    }
  }
  if (limits.nodeHours !== undefined) {
    const heldHours = [...held.bookings, wanted].reduce((sum, b) => sum + nodeHoursAhead(b, now), 0);
    if (heldHours > limits.nodeHours + 1e-9) {
      throw new FairUseExceeded(
        `${party} would hold ${round(heldHours)} node-hours from now on (` +
          `${round(nodeHoursAhead(wanted, now))} of them this request's); one party holds at most ` +
          `${limits.nodeHours} (nodeHours=${limits.nodeHours} in ${setting}): ask for less, or wait for a ` +
          `booking to end`,
        'nodeHours',
      );
    }
  }
}

/** Node-hours of `booking` from `now` on. */
export function nodeHoursAhead(booking: HeldBooking, now: number): number {
  return (booking.nodes * Math.max(0, booking.end - Math.max(booking.start, now))) / hour;
}

/** The most nodes `bookings` and `wanted` take together at one instant of `wanted`, and when. */
export function peakNodes(bookings: readonly HeldBooking[], wanted: HeldBooking): { nodes: number; at: number } {
  const overlapping = bookings.filter((b) => b.start < wanted.end && wanted.start < b.end);
  const edges = [wanted.start, ...overlapping.map((b) => b.start).filter((s) => s > wanted.start && s < wanted.end)];
  let best = { nodes: wanted.nodes, at: wanted.start };
  for (const at of edges) {
    const nodes = wanted.nodes + overlapping.reduce((sum, b) => sum + (b.start <= at && at < b.end ? b.nodes : 0), 0);
    if (nodes > best.nodes) best = { nodes, at };
  }
  return best;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
