/** An input error: the message names the file part, the entry and the field. */
export class WorkloadError extends Error {
  override readonly name = 'WorkloadError';
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'nothing';
  return JSON.stringify(value) ?? String(value);
}

/** Reads the fields of one JSON object, naming it (`jobs[3] (J4)`) in every message. */
export class Fields {
  constructor(
    private readonly where: string,
    private readonly object: Json,
    allowed: readonly string[],
  ) {
    for (const key of Object.keys(object)) {
      if (!allowed.includes(key)) throw this.error(`unknown field "${key}" (allowed: ${allowed.join(', ')})`);
    }
  }

  error(message: string): WorkloadError {
    return new WorkloadError(`${this.where}: ${message}`);
  }

  has(name: string): boolean {
    return this.object[name] !== undefined;
  }

  string(name: string, required: true): string;
  string(name: string, required?: false): string | undefined;
  string(name: string, required = false): string | undefined {
    const value = this.object[name];
    if (value === undefined) {
      if (required) throw this.error(`"${name}" is required`);
      return undefined;
    }
    if (typeof value !== 'string' || value.trim() === '')
      throw this.error(`"${name}" must be a non-empty string, got ${shown(value)}`);
    return value;
  }

  /** A number with a range: 'count' (whole, >= 1), 'whole' (>= 0), 'positive' (> 0), 'non-negative' (>= 0). */
  number(name: string, kind: NumberKind, required: true): number;
  number(name: string, kind: NumberKind, required?: false): number | undefined;
  number(name: string, kind: NumberKind, required = false): number | undefined {
    const value = this.object[name];
    if (value === undefined) {
      if (required) throw this.error(`"${name}" is required`);
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || !numberOk(value, kind))
      throw this.error(`"${name}" must be ${kindText[kind]}, got ${shown(value)}`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const value = this.object[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') throw this.error(`"${name}" must be true or false, got ${shown(value)}`);
    return value;
  }

  object_(name: string): Json | undefined {
    const value = this.object[name];
    if (value === undefined) return undefined;
    if (!isObject(value)) throw this.error(`"${name}" must be an object, got ${shown(value)}`);
    return value;
  }

  array(name: string, required: boolean): unknown[] | undefined {
    const value = this.object[name];
    if (value === undefined) {
      if (required) throw this.error(`"${name}" is required`);
      return undefined;
    }
    if (!Array.isArray(value)) throw this.error(`"${name}" must be an array, got ${shown(value)}`);
    return value;
  }
}

export type NumberKind = 'count' | 'whole' | 'positive' | 'non-negative' | 'factor' | 'share';

export const kindText: Record<NumberKind, string> = {
  count: 'a whole number, 1 or more',
  whole: 'a whole number, 0 or more',
  positive: 'a number greater than 0',
  'non-negative': 'a number, 0 or more',
  factor: 'a number, 1 or more',
  share: 'a number from 0 to 1',
};

export function numberOk(value: number, kind: NumberKind): boolean {
  switch (kind) {
    case 'count':
      return Number.isInteger(value) && value >= 1;
    case 'whole':
      return Number.isInteger(value) && value >= 0;
    case 'positive':
      return value > 0;
    case 'non-negative':
      return value >= 0;
    case 'factor':
      return value >= 1;
    case 'share':
      return value >= 0 && value <= 1;
  }
}

export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
