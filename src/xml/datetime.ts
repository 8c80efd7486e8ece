/** xs:dateTime on the wire. */

/** xs:dateTime without a zone is read as UTC, not as the server's local time. */
export function date(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  return new Date(/(Z|[+-]\d\d:\d\d)$/.test(value) ? value : `${value}Z`);
}

/**
 * UTC, whole seconds (2026-11-22T08:00:00Z): what every party parses alike. `up` rounds a
 * fractional second up, for ends and deadlines that must not move earlier than promised.
 */
export function xsDateTime(value: Date, round: 'down' | 'up' = 'down'): string {
  const seconds = round === 'up' ? Math.ceil(value.getTime() / 1000) : Math.floor(value.getTime() / 1000);
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
