/**
 * The object without the keys whose value is undefined (optional fields stay absent, not
 * present-and-undefined). A new object, its keys added in order: deleting keys from the
 * given one would switch V8 to slow (dictionary) properties for it, and a read offer's
 * request, context and terms are read all over the engine and the scheduler.
 */
export function dropUndefined<T extends object>(value: T): T {
  const defined = {} as T;
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] !== undefined) defined[key] = value[key];
  return defined;
}
