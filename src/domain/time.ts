/** xs:dateTime in UTC without milliseconds when they are zero: how times appear in messages and documents. */
export function isoTime(d: Date): string {
  return d.toISOString().replace('.000Z', 'Z');
}

/** The next whole second at or after `d`: times the server promises are stated exactly on the wire. */
export function ceilToSecond(d: Date): Date {
  return new Date(Math.ceil(d.getTime() / 1000) * 1000);
}

export function addSeconds(d: Date, seconds: number): Date {
  return new Date(d.getTime() + seconds * 1000);
}
