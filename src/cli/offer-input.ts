import type { WsagClient } from '../client/wsag-client.js';
import { offerFromTemplate, type OfferSetting } from '../xml/offer-from-template.js';
import type { OptionsConfig } from './command.js';
import { CliError, UsageError } from './errors.js';
import { pickTemplate, summarizeTemplate, type TemplateSummary } from './template-summary.js';

/** `--template NAME [--set LOCATION=VALUE ...]`: how every command that sends an offer describes it. */

export const offerOptions = {
  template: { type: 'string', short: 't' },
  set: { type: 'string', multiple: true, short: 's' },
} as const satisfies OptionsConfig;

export const templateHelp = '  --template NAME    the template\'s Name or TemplateId (see: wsag templates)';
export const setHelp = [
  '  --set LOCATION=VALUE',
  '                     replace a value in the offer; repeatable. LOCATION is an Item name',
  '                     of the template (NodeCount) or an XPath over the offer selecting',
  '                     elements with text or attributes; prefixes wsag, jsdl, arp, sla, ...',
  '                     and those the template declares are known',
];

/** The served template named `ref` turned into an offer with `settings` applied. */
export async function templateOffer(client: WsagClient, ref: string, settings: OfferSetting[]): Promise<{ template: TemplateSummary; offer: string }> {
  const template = pickTemplate((await client.templates()).map(summarizeTemplate), ref);
  checkItemNames(template, settings);
  return { template, offer: offerFromTemplate(template.xml, settings) };
}

/**
 * `LOCATION=VALUE`, split at the first `=` outside brackets, parentheses and quotes, so an
 * XPath predicate such as `[@wsag:Name='Job']` may stay in the location.
 */
export function parseSetting(text: string, option = '--set'): OfferSetting {
  const at = splitPoints(text, '=')[0];
  const location = at === undefined ? '' : text.slice(0, at).trim();
  if (at !== undefined && location) return { location, value: text.slice(at + 1) };
  throw new UsageError(`${option} expects LOCATION=VALUE (an Item name or an XPath, then the value), got "${text}"`);
}

/** Positions of `separator` outside brackets, parentheses and quotes. */
export function splitPoints(text: string, separator: string): number[] {
  const points: number[] = [];
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '(') depth++;
    else if (ch === ']' || ch === ')') depth--;
    else if (ch === separator && depth === 0) points.push(i);
  }
  return points;
}

/** A bare name must be one of the template's Items: as XPath it would select nothing useful. */
function checkItemNames(template: TemplateSummary, settings: OfferSetting[]): void {
  for (const { location } of settings) {
    if (/^[A-Za-z_][\w.-]*$/.test(location) && !template.items.some((i) => i.name === location)) {
      const known = template.items.map((i) => i.name).join(', ') || 'none';
      throw new CliError(`--set ${location}: template ${template.name} has no Item "${location}"; its Items are: ${known}`);
    }
  }
}
