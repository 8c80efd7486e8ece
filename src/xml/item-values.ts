import { didYouMean } from '../domain/suggest.js';
import type { OfferSetting } from './offer-from-template.js';
import type { ItemSummary, TemplateSummary } from './template-summary.js';

/** A value a template's Item cannot take, or a name it has no Item for, in plain words. */
export class TemplateValueError extends Error {
  override name = 'TemplateValueError';
}

/** Content-model constraints (the Window, NodeCountForm): they shape an element, no value sets them. */
const structural = new Set(['sequence', 'choice', 'all', 'group']);
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;

/** Whether `--set NAME=VALUE` can change the Item: a value constraint on something the template has. */
export function settable(item: ItemSummary): boolean {
  return item.selected > 0 && !item.constraint.some((c) => structural.has(c.facet));
}

/** The values an Item takes, in words: "a whole number from 1 to 64", "one of Legacy, Standard". */
export function valuesInWords(item: Pick<ItemSummary, 'constraint' | 'value'>): string {
  const facet = (name: string) => item.constraint.find((c) => c.facet === name)?.value;
  const choices = item.constraint.filter((c) => c.facet === 'enumeration').map((c) => c.value ?? '');
  if (choices.length > 0) return choices.length === 1 ? `"${choices[0]}"` : `one of ${choices.join(', ')}`;
  const low = facet('minInclusive') ?? facet('minExclusive');
  const high = facet('maxInclusive') ?? facet('maxExclusive');
  const times = [low, high, item.value].some((v) => v !== undefined && isoTime.test(v));
  // Whole numbers only where the constraint says so: whole bounds alone do not (a penalty of 50.5 within 0 to 10000).
  const kind = times
    ? 'a date and time such as 2026-11-29T14:00:00Z'
    : facet('fractionDigits') === '0'
      ? 'a whole number'
      : 'a number';
  if (low !== undefined && high !== undefined) return `${kind} from ${low} to ${high}`;
  if (low !== undefined) return `${kind}, ${low} or ${times ? 'later' : 'more'}`;
  if (high !== undefined) return `${kind}, at most ${high}`;
  return facet('pattern') !== undefined ? `text matching ${facet('pattern')}` : kind;
}

/** Why `value` cannot be the Item's value, in plain words; undefined when it can (the server checks it again). */
export function itemValueProblem(item: ItemSummary, value: string): string | undefined {
  const must = `${item.name} must be ${valuesInWords(item)}; got '${value}'`;
  const choices = item.constraint.filter((c) => c.facet === 'enumeration').map((c) => c.value);
  if (choices.length > 0) return choices.includes(value) ? undefined : must;
  const facet = (name: string) => item.constraint.find((c) => c.facet === name)?.value;
  const pattern = facet('pattern');
  if (pattern !== undefined && !new RegExp(`^(?:${pattern})$`, 'u').test(value)) return must;
  const bounds = ['minInclusive', 'minExclusive', 'maxInclusive', 'maxExclusive'].filter((f) => facet(f) !== undefined);
  if (bounds.length === 0) return undefined;
  const times = bounds.some((f) => isoTime.test(facet(f) as string));
  const of = (v: string) =>
    times
      ? isoTime.test(v)
        ? Date.parse(v)
        : NaN
      : /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)
        ? Number(v)
        : NaN;
  const number = of(value);
  if (Number.isNaN(number)) return must;
  if (!times && valuesInWords(item).startsWith('a whole number') && !Number.isInteger(number)) return must;
  const outside = (f: string) => {
    const limit = of(facet(f) as string);
    return f === 'minInclusive'
      ? number < limit
      : f === 'minExclusive'
        ? number <= limit
        : f === 'maxInclusive'
          ? number > limit
          : number >= limit;
  };
  return bounds.some(outside) ? must : undefined;
}

/**
 * A reservation's window by name: `StartTime=`, `EndTime=` and `Duration=` (seconds, or an
 * ISO 8601 duration such as PT2H) for a template with an arp:AllocationTimeConstraint. A new
 * start keeps the window's length unless an end or a duration is given too.
 */
export function windowSettings(template: TemplateSummary, settings: OfferSetting[]): OfferSetting[] {
  const window = template.window;
  const named = (name: string) => settings.find((s) => s.location === name)?.value;
  const [start, end, duration] = [named('StartTime'), named('EndTime'), named('Duration')];
  if (!window || (start === undefined && end === undefined && duration === undefined)) return settings;
  const time = (name: string, value: string) => {
    if (!isoTime.test(value.trim()))
      throw new TemplateValueError(`${name} must be a date and time such as 2026-11-29T14:00:00Z; got '${value}'`);
    return Date.parse(value.trim());
  };
  const from = start !== undefined ? time('StartTime', start) : Date.parse(window.start);
  let to = end !== undefined ? time('EndTime', end) : from + (Date.parse(window.end) - Date.parse(window.start));
  if (duration !== undefined) {
    if (end !== undefined)
      throw new TemplateValueError('give EndTime or Duration, not both: each sets where the window ends');
    const seconds = durationSeconds(duration);
    // The template's own Duration Item, if it has one, bounds the length.
    const bound = template.items.find((i) => i.name === 'Duration');
    const problem = bound && itemValueProblem({ ...bound, name: 'Duration (seconds)' }, String(seconds));
    if (problem) throw new TemplateValueError(problem);
    to = from + seconds * 1000;
  }
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
  if (to <= from)
    throw new TemplateValueError(
      `the window must end after it starts: EndTime ${iso(to)} is not after StartTime ${iso(from)}`,
    );
  return [
    ...settings.filter((s) => !['StartTime', 'EndTime', 'Duration'].includes(s.location)),
    { location: '//arp:AllocationTimeConstraint/arp:StartTime', value: iso(from) },
    { location: '//arp:AllocationTimeConstraint/arp:EndTime', value: iso(to) },
  ];
}

function durationSeconds(text: string): number {
  const value = text.trim();
  if (/^\d+$/.test(value) && Number(value) > 0) return Number(value);
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(value);
  const seconds = iso
    ? Number(iso[1] ?? 0) * 86_400 + Number(iso[2] ?? 0) * 3600 + Number(iso[3] ?? 0) * 60 + Number(iso[4] ?? 0)
    : 0;
  if (seconds > 0) return seconds;
  throw new TemplateValueError(`Duration must be a whole number of seconds or a duration such as PT2H; got '${text}'`);
}

/**
 * The settings a template takes, checked and resolved (a reservation's window by name): a bare name must be an Item of
 * the template that a value can set (as XPath it would select nothing useful), and the value one the Item takes.
 * `label` says where a setting came from in the messages (`--set `, `item `).
 */
export function checkedSettings(template: TemplateSummary, settings: OfferSetting[], label: string): OfferSetting[] {
  const resolved = windowSettings(template, settings);
  const names = itemNames(template);
  for (const { location, value } of resolved) {
    if (!/^[A-Za-z_][\w.-]*$/.test(location)) continue;
    const item = template.items.find((i) => i.name === location && settable(i));
    if (!item)
      throw new TemplateValueError(
        `${label}${location}: template ${template.name} has no Item "${location}" to set` +
          `${didYouMean(location, names)}; its Items are: ${names.join(', ') || 'none'}`,
      );
    const problem = itemValueProblem(item, value);
    if (problem) throw new TemplateValueError(`${label}${problem}`);
  }
  return resolved;
}

/** The names a template's values take: its settable Items, and a reservation's StartTime, EndTime and Duration. */
export function itemNames(template: TemplateSummary): string[] {
  const names = template.items.filter(settable).map((i) => i.name);
  return template.window
    ? [...names, ...['StartTime', 'EndTime', 'Duration'].filter((n) => !names.includes(n))]
    : names;
}
