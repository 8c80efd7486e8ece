/**
 * xs:duration values of the term language (assessment intervals such as PT30M, checkpoint
 * intervals) as milliseconds. Years and months have no fixed length, so a duration that
 * uses them cannot measure lateness or a checkpoint gap: it is refused with a message that
 * says so rather than guessed.
 */
const pattern = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

export function durationMs(value: string): number {
  const text = value.trim();
  const m = pattern.exec(text);
  if (!m || text === 'P' || text.endsWith('T'))
    throw new RangeError(`duration "${value}" is not an xs:duration such as PT30M`);
  const [, years, months, weeks, days, hours, minutes, seconds] = m;
  if (Number(years ?? 0) > 0 || Number(months ?? 0) > 0) {
    throw new RangeError(
      `duration "${value}" uses years or months, which have no fixed length; use weeks, days, hours, ` +
        `minutes or seconds`,
    );
  }
  const ms =
    Number(weeks ?? 0) * 7 * 86_400_000 +
    Number(days ?? 0) * 86_400_000 +
    Number(hours ?? 0) * 3_600_000 +
    Number(minutes ?? 0) * 60_000 +
    Math.round(Number(seconds ?? 0) * 1000);
  return ms;
}

/** A duration for people: `1 h 5 min`, `45 s`, `0 s`. */
export function describeMs(ms: number): string {
  const total = Math.round(Math.abs(ms) / 1000);
  const h = Math.floor(total / 3600);
  const min = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts = [h > 0 ? `${h} h` : '', min > 0 ? `${min} min` : '', s > 0 ? `${s} s` : ''].filter(Boolean);
  return `${ms < 0 ? '-' : ''}${parts.length > 0 ? parts.join(' ') : '0 s'}`;
}
