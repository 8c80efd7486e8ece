import { offerFromTemplate, type OfferSetting } from '../../xml/offer-from-template.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';
import { pickTemplate, summarizeTemplate, type TemplateSummary } from '../template-summary.js';

export const createCommand: Command = {
  name: 'create',
  summary: 'create an agreement from a template',
  synopsis: 'wsag create --template NAME [--set LOCATION=VALUE ...] [--dry-run] [--url URL] [--json]',
  description: [
    'Fetches the templates, turns the chosen one into an offer (the template without its',
    'creation constraints), applies each --set, and sends CreateAgreement. Prints the new',
    'agreement\'s id and the address of its endpoint reference (EPR).',
  ],
  optionHelp: [
    '  --template NAME    the template\'s Name or TemplateId (see: wsag templates)',
    '  --set LOCATION=VALUE',
    '                     replace a value in the offer; repeatable. LOCATION is an Item name',
    '                     of the template (NodeCount) or an XPath over the offer selecting',
    '                     elements with text or attributes; prefixes wsag, jsdl, arp, sla, ...',
    '                     and those the template declares are known',
    '  --dry-run          print the offer XML and send nothing',
    urlHelp,
    jsonHelp,
  ],
  examples: [
    '  wsag create --template deadline-job --set NodeCount=16 --set GuaranteeLevel=Full',
    '  wsag create --template advance-reservation --set "//arp:StartTime=2026-12-01T08:00:00Z" --dry-run',
  ],
  options: {
    ...urlOption,
    ...jsonOption,
    template: { type: 'string', short: 't' },
    set: { type: 'string', multiple: true, short: 's' },
    'dry-run': { type: 'boolean' },
  },
  positionals: [],
  async run(args, ctx) {
    const ref = args.string('template');
    if (!ref) throw new UsageError('--template NAME is required (list them with: wsag templates)');
    const settings = args.list('set').map(parseSetting);
    const client = ctx.client(serverUrl(args, ctx.env));
    const template = pickTemplate((await client.templates()).map(summarizeTemplate), ref);
    checkItemNames(template, settings);
    const offer = offerFromTemplate(template.xml, settings);
    const about = { name: template.name, id: template.id };

    if (args.flag('dry-run')) {
      if (args.flag('json')) printJson(ctx.out, { template: about, offer });
      else ctx.out(offer);
      return;
    }
    const created = await client.createAgreement(offer);
    if (args.flag('json')) {
      printJson(ctx.out, { agreementId: created.agreementId, address: created.address, template: about });
      return;
    }
    ctx.out(`created agreement ${created.agreementId}`);
    ctx.out(`  template  ${template.name} (TemplateId ${template.id})`);
    ctx.out(`  EPR       ${created.address}  (AgreementId ${created.agreementId})`);
    ctx.out(`see its state with: wsag state ${created.agreementId}`);
  },
};

/**
 * `LOCATION=VALUE`, split at the first `=` outside brackets, parentheses and quotes, so an
 * XPath predicate such as `[@wsag:Name='Job']` may stay in the location.
 */
export function parseSetting(text: string): OfferSetting {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '(') depth++;
    else if (ch === ']' || ch === ')') depth--;
    else if (ch === '=' && depth === 0) {
      const location = text.slice(0, i).trim();
      if (location) return { location, value: text.slice(i + 1) };
      break;
    }
  }
  throw new UsageError(`--set expects LOCATION=VALUE (an Item name or an XPath, then the value), got "${text}"`);
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
