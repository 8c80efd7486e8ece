import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { additionsOf, offerOptions, parseSetting, runHelp, setHelp, templateOffer } from '../offer-input.js';
import { printJson } from '../output.js';

const actions = ['create', 'accept', 'reject'] as const;

export const pendingCommand: Command = {
  name: 'pending',
  summary: 'pending agreements: create one; accept or reject one (operators)',
  synopsis:
    'wsag pending (create --template NAME [--set LOCATION=VALUE ...] [--run EXECUTABLE ...] [--account ' +
    'ACCOUNT] | accept ID | reject ID) [--url URL] [--json]',
  description: [
    "create: sends CreatePendingAgreement with the template's offer (like wsag create). The",
    '        capacity is booked, and the agreement stays Pending until the provider decides.',
    'accept: the provider accepts the pending agreement ID: it becomes Observed.',
    'reject: the provider rejects it: it becomes Rejected and its capacity is freed.',
    "accept and reject are the provider's decisions, taken through the JSON admin API",
    '(POST /api/agreements/ID/accept|reject): only operators (WSAG_ADMINS) may take them.',
  ],
  optionHelp: [
    "  --template NAME    (create) the template's Name or TemplateId (see: wsag templates)",
    ...setHelp,
    ...runHelp,
    urlHelp,
    jsonHelp,
  ],
  examples: [
    '  wsag pending create --template deadline-job --set NodeCount=16',
    '  wsag pending accept <ID>',
    '  wsag pending reject <ID>',
  ],
  options: { ...urlOption, ...jsonOption, ...offerOptions },
  positionals: ['ACTION'],
  optionalPositionals: ['ID'],
  async run(args, ctx) {
    const [action, id] = args.positionals as [string, string | undefined];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use create, accept or reject`);
    const client = ctx.client(serverUrl(args, ctx.env));
    if (action === 'create') {
      if (id !== undefined) throw new UsageError(`unexpected argument "${id}": pending create takes --template NAME`);
      const ref = args.string('template');
      if (!ref) throw new UsageError('--template NAME is required (list them with: wsag templates)');
      const { template, offer } = await templateOffer(
        client,
        ref,
        args.list('set').map((s) => parseSetting(s)),
        additionsOf(args),
      );
      const created = await client.createPendingAgreement(offer);
      if (args.flag('json')) {
        printJson(ctx.out, { ...created, state: 'Pending', template: { name: template.name, id: template.id } });
        return;
      }
      ctx.out(`created pending agreement ${created.agreementId} (template ${template.name})`);
      ctx.out(`  EPR  ${created.address}  (AgreementId ${created.agreementId})`);
      ctx.out(`the provider decides with: wsag pending accept ${created.agreementId}  (or reject)`);
      return;
    }
    if (id === undefined) throw new UsageError(`missing ID: wsag pending ${action} ID`);
    if (args.string('template') !== undefined || args.list('set').length > 0)
      throw new UsageError(`--template and --set belong to pending create, not pending ${action}`);
    const decided = await client.decide(id, action === 'accept' ? 'Accept' : 'Reject');
    if (args.flag('json')) printJson(ctx.out, decided);
    else ctx.out(`agreement ${id}: ${decided.state}`);
  },
};
