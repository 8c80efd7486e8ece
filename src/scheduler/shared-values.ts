/**
 * One frozen instance per distinct value of a kind that many jobs hold equal copies of
 * (node requirements, checkpoint plans): the plan keeps a reference each instead of an
 * object each (at 100,000 live jobs an object each is ~5 MiB per kind). Bounded: past
 * `limit` distinct values a new value is returned as it is, so odd requests cannot grow it.
 */
export class SharedValues<T extends object> {
  private readonly byKey = new Map<string, T>();

  /** `key` names a value: equal values, equal keys (by default its JSON). */
  constructor(
    private readonly limit = 1024,
    private readonly key: (value: T) => string = keyOf,
  ) {}

  shared(value: T): T {
    const key = this.key(value);
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    if (this.byKey.size >= this.limit) return value;
    this.byKey.set(key, deepFreeze(value));
    return value;
  }
}

/**
 * Equal values (built field by field in the same order) give equal keys; Infinity and NaN differ (JSON writes both as
 * null).
 */
function keyOf(value: object): string {
  return JSON.stringify(value, (_field, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
}

/** Frozen to the leaves: a shared value changed in place would change every job holding it. */
function deepFreeze<T extends object>(value: T): T {
  for (const field of Object.values(value))
    if (typeof field === 'object' && field !== null && !Object.isFrozen(field)) deepFreeze(field);
  return Object.freeze(value);
}
