/** "Did you mean": the candidate closest to a mistyped word, if one is close enough to be what was meant. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance =
      candidate.toLowerCase().startsWith(lower) && lower.length >= 3 ? 0 : editDistance(lower, candidate.toLowerCase());
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  // A third of the word may be wrong (at least one letter, at most three).
  return best && best.distance <= Math.min(3, Math.max(1, Math.floor(word.length / 3))) ? best.candidate : undefined;
}

/** `; did you mean "x"?` (or as `show` writes it) or nothing. */
export function didYouMean(
  word: string,
  candidates: readonly string[],
  show = (match: string) => `"${match}"`,
): string {
  const match = closest(word, candidates);
  return match === undefined ? '' : `; did you mean ${show(match)}?`;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
