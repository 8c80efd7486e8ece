/**
 * Whether a job is among a `share` of the workload, by a hash (FNV-1a) of its id and a
 * salt per experiment: the same jobs in every run and on every machine, and different
 * experiments choose independently.
 */
export function chosenByHash(id: string, share: number, salt: number): boolean {
  return (fnv1a(id, salt) >>> 0) / 2 ** 32 < share;
}

/** A number in [0, 1) drawn from the id and the salt: the same draw every run. */
export function uniformByHash(id: string, salt: number): number {
  let h = fnv1a(id, salt);
  // A final mix, so ids that differ only in their last character spread over the whole range.
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) / 2 ** 32;
}

/** The workload's jobs in the order they arrive (ties by id), for the replays that admit them one by one. */
export function inArrivalOrder<J extends { id: string; arrival: number }>(jobs: readonly J[]): J[] {
  return [...jobs].sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
}

/** FNV-1a over the id's characters, from an offset basis mixed with the salt (a signed 32-bit number). */
function fnv1a(id: string, salt: number): number {
  let h = 2166136261 ^ salt;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return h;
}
