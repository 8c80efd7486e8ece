/**
 * A deep copy of plain data (objects, arrays, Dates, primitives) as a store's row gives it
 * back: a member whose value is undefined is left out, as JSON leaves it out. About six
 * times faster than structuredClone on a negotiation (1.6 µs against 10): what
 * RecentNegotiations hands in and out. Anything else (a Map, a class instance) goes to
 * structuredClone whole.
 */
export function plainCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return value.map(plainCopy) as T;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member !== undefined) copy[key] = plainCopy(member);
  }
  return copy as T;
}
