/** Removes the keys whose value is undefined (optional fields stay absent, not present-and-undefined). */
export function dropUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}
