import type { WsagClient } from '../client/wsag-client.js';
import type { Application, ChargeAccount } from '../domain/terms.js';
import { withApplication, withChargeAccount } from '../xml/offer-additions.js';
import { offerFromTemplate, type OfferSetting } from '../xml/offer-from-template.js';
import type { OptionsConfig } from './command.js';
import type { Args } from './context.js';
import { CliError, UsageError } from './errors.js';
import { didYouMean } from '../domain/suggest.js';
import { checkedSettings, TemplateValueError } from '../xml/item-values.js';
import { summarizeTemplate, type TemplateSummary } from '../xml/template-summary.js';

/** `--template NAME [--set LOCATION=VALUE ...]`: how every command that sends an offer describes it. */

export const offerOptions = {
  template: { type: 'string', short: 't' },
  set: { type: 'string', multiple: true, short: 's' },
  run: { type: 'string' },
  arg: { type: 'string', multiple: true },
  env: { type: 'string', multiple: true },
  workdir: { type: 'string' },
  account: { type: 'string' },
} as const satisfies OptionsConfig;

export const templateHelp = "  --template NAME    the template's Name or TemplateId (see: wsag templates)";
export const setHelp = [
  '  --set LOCATION=VALUE',
  '                     replace a value in the offer; repeatable. LOCATION is an Item name',
  '                     of the template (NodeCount) or an XPath over the offer selecting',
  '                     elements with text or attributes; prefixes wsag, jsdl, arp, sla, ...',
  '                     and those the template declares are known',
];

export const runHelp = [
  '  --run EXECUTABLE [--arg VALUE ...] [--env NAME=VALUE ...] [--workdir DIR]',
  '                     the program the job runs (a JSDL POSIXApplication): servers in front',
  '                     of Slurm run executables their operator allows; --arg and --env repeat',
  '                     (an argument that starts with - is written --arg=-x)',
  '  --account ACCOUNT[/VO[/GROUP]]',
  '                     charge the job to this account (sla:ChargeAccount): its price is held',
  '                     on it until the agreement ends (see: wsag account)',
];

/** What `--run` and `--account` add to an offer. */
export interface OfferAdditions {
  application?: Application;
  chargeAccount?: ChargeAccount;
}

/**
 * The served template named `ref` turned into an offer with `settings` applied, and what `--run` and `--account` add.
 */
export async function templateOffer(
  client: WsagClient,
  ref: string,
  settings: OfferSetting[],
  additions: OfferAdditions = {},
): Promise<{ template: TemplateSummary; offer: string }> {
  const template = pickTemplate((await client.templates()).map(summarizeTemplate), ref);
  let resolved: OfferSetting[];
  try {
    resolved = checkedSettings(template, settings, '--set ');
  } catch (error) {
    if (error instanceof TemplateValueError) throw new CliError(error.message);
    throw error;
  }
  let offer = offerFromTemplate(template.xml, resolved);
  try {
    if (additions.application) offer = withApplication(offer, additions.application);
  } catch (error) {
    throw new CliError(`--run: ${(error as Error).message} (template ${template.name})`);
  }
  try {
    if (additions.chargeAccount) offer = withChargeAccount(offer, additions.chargeAccount);
  } catch (error) {
    throw new CliError(`--account: ${(error as Error).message} (template ${template.name})`);
  }
  return { template, offer };
}

/** `--run ...` and `--account ACCOUNT[/VO[/GROUP]]` of the command line. */
export function additionsOf(args: Args): OfferAdditions {
  const application = applicationOf(args);
  const account = args.string('account');
  let chargeAccount: ChargeAccount | undefined;
  if (account !== undefined) {
    const [id, vo, group] = account.split('/');
    if (!id) throw new UsageError(`--account expects ACCOUNT[/VO[/GROUP]], got "${account}"`);
    chargeAccount = { account: id, ...(vo ? { virtualOrganisation: vo } : {}), ...(group ? { group } : {}) };
  }
  return { ...(application ? { application } : {}), ...(chargeAccount ? { chargeAccount } : {}) };
}

/** `--run`, `--arg`, `--env`, `--workdir` as an application; undefined without --run. */
function applicationOf(args: Args): Application | undefined {
  const executable = args.string('run');
  const rest = ['arg', 'env', 'workdir'].filter((o) =>
    o === 'workdir' ? args.string(o) !== undefined : args.list(o).length > 0,
  );
  if (!executable) {
    if (rest.length > 0)
      throw new UsageError(`--${rest[0]} needs --run EXECUTABLE: it describes the program the job runs`);
    return undefined;
  }
  const environment = args.list('env').map((text) => {
    const at = text.indexOf('=');
    if (at <= 0) throw new UsageError(`--env expects NAME=VALUE, got "${text}"`);
    return { name: text.slice(0, at), value: text.slice(at + 1) };
  });
  const workingDirectory = args.string('workdir');
  return {
    executable,
    arguments: args.list('arg'),
    environment,
    ...(workingDirectory !== undefined ? { workingDirectory } : {}),
  };
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

/** The template whose Name, or else TemplateId, is `ref`; otherwise a message listing what the server offers. */
export function pickTemplate(templates: TemplateSummary[], ref: string): TemplateSummary {
  const found = templates.find((t) => t.name === ref) ?? templates.find((t) => t.id === ref);
  if (found) return found;
  if (templates.length === 0) throw new CliError(`no template "${ref}": the server offers no templates`);
  const offered = templates.map((t) => `${t.name} (id ${t.id})`).join(', ');
  throw new CliError(
    `no template named "${ref}"${didYouMean(
      ref,
      templates.map((t) => t.name),
    )}; the server offers: ${offered}`,
  );
}
