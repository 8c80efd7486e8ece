/** xs:dateTime in UTC without milliseconds when they are zero: how times appear in messages and documents. */
export function isoTime(d: Date): string {
  return d.toISOString().replace('.000Z', 'Z');
}

export function addSeconds(d: Date, seconds: number): Date {
  return new Date(d.getTime() + seconds * 1000);
}
