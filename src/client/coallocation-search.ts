/**
 * The search for a common start (CrossBroker's co-allocation of a parallel job across sites,
 * Fernández del Castillo 2008): every provider is asked, in parallel, for its earliest start at or after a
 * candidate time (its first Advisory slot); the latest answer becomes the next candidate.
 * Each provider's earliest start is never before the candidate, so the candidate only moves
 * later, and the search ends at the first time every provider can start: the earliest
 * common start, found without holding anything.
 */

/** One task's earliest start at or after `from`; rejects with the provider's reason when it has none. */
export type EarliestStart = (from: Date) => Promise<Date>;

export interface CommonStart {
  start: Date;
  /** Advisory rounds asked (one per provider each). */
  rounds: number;
}

export class NoCommonStart extends Error {}

export async function searchCommonStart(
  tasks: readonly EarliestStart[],
  from: Date,
  maxRounds: number,
): Promise<CommonStart> {
  let candidate = wholeSecond(from);
  for (let round = 1; round <= maxRounds; round++) {
    const starts = (await Promise.all(tasks.map((earliest) => earliest(candidate)))).map(wholeSecond);
    const latest = Math.max(...starts.map((s) => s.getTime()));
    if (latest <= candidate.getTime()) return { start: candidate, rounds: round };
    candidate = new Date(latest);
  }
  throw new NoCommonStart(
    `no common start within ${maxRounds} rounds (the providers' earliest starts still differ; the last ` +
      `candidate was ${candidate.toISOString()})`,
  );
}

/** Windows are written in whole seconds. */
function wholeSecond(at: Date): Date {
  return new Date(Math.ceil(at.getTime() / 1000) * 1000);
}
