import { InvalidTerms } from '../domain/errors.js';

/**
 * Typed values read at the boundary: a number is checked against what the server
 * can act on when it is read, and refused with InvalidTerms naming the element and the
 * value. The schema has already checked the lexical form; these are the limits beyond it
 * (finite, integral where a count is meant, in range). docs/security.md lists them.
 */
export interface NumberRule {
  integer?: boolean;
  min: number;
  max: number;
  /** What the value counts, for the message ("nodes", "seconds"). */
  unit?: string;
}

export const limits = {
  /** Nodes in one request, and a node count in a guarantee objective. */
  nodes: { integer: true, min: 1, max: 100_000, unit: 'nodes' },
  nodesAvailable: { integer: true, min: 0, max: 100_000, unit: 'nodes' },
  cpusPerNode: { integer: true, min: 1, max: 1_000_000, unit: 'CPUs' },
  memoryBytes: { min: 0, max: 2 ** 50, unit: 'bytes' },
  storageGB: { min: 0, max: 1e9, unit: 'GB' },
  seconds: { integer: true, min: 1, max: 100 * 365 * 86_400, unit: 'seconds' },
  checkpointsPerHour: { min: 0, max: 3600, unit: 'checkpoints per hour' },
  outages: { integer: true, min: 0, max: 1000, unit: 'outages' },
  count: { integer: true, min: 1, max: 1_000_000 },
  importance: { min: -1e9, max: 1e9 },
  money: { min: 0, max: 1e12 },
  /** A bid per node-hour (sla:Bid): a zero bid would take capacity for nothing. */
  bid: { min: 0.000001, max: 1_000_000, unit: 'per node-hour' },
  checkpointBytes: { integer: true, min: 1, max: 2 ** 40, unit: 'bytes' },
} as const satisfies Record<string, NumberRule>;

export function number(value: string | undefined, element: string, rule: NumberRule): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value.trim());
  const refuse = (why: string) => new InvalidTerms(`${element} ${quoteValue(value)} ${why}`);
  if (value.trim() === '' || !Number.isFinite(n)) throw refuse('is not a finite number');
  if (rule.integer && !Number.isInteger(n)) throw refuse('is not a whole number');
  if (n < rule.min || n > rule.max)
    throw refuse(`is outside ${rule.min} to ${rule.max}${rule.unit ? ` ${rule.unit}` : ''}`);
  return n;
}

/**
 * A value quoted for a fault message: short, with control characters shown as escapes so the answer stays well-formed.
 */
export function quoteValue(value: string): string {
  const shown = value.length > 64 ? `${value.slice(0, 64)}...` : value;
  const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  return `"${shown.replace(/[\u0000-\u001f\u007f\ufffe\uffff]/g, escaped)}"`;
}
