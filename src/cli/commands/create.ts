import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import {
  additionsOf,
  offerOptions,
  parseSetting,
  runHelp,
  setHelp,
  templateHelp,
  templateOffer,
} from '../offer-input.js';
import { UsageError } from '../errors.js';
import { printJson } from '../output.js';

export { parseSetting } from '../offer-input.js';

export const createCommand: Command = {
  name: 'create',
  summary: 'create an agreement from a template',
  synopsis:
    'wsag create --template NAME [--set LOCATION=VALUE ...] [--run EXECUTABLE [--arg VALUE ...] [--env ' +
    'NAME=VALUE ...] [--workdir DIR]] [--account ACCOUNT] [--dry-run] [--url URL] [--json]',
  description: [
    'Fetches the templates, turns the chosen one into an offer (the template without its',
    'creation constraints), applies each --set, and sends CreateAgreement. Prints the new',
    "agreement's id and the address of its endpoint reference (EPR).",
  ],
  optionHelp: [
    templateHelp,
    ...setHelp,
    ...runHelp,
    '  --dry-run          print the offer XML and send nothing',
    urlHelp,
    jsonHelp,
  ],
  examples: [
    '  wsag create --template deadline-job --set NodeCount=16 --set GuaranteeLevel=Enhanced',
    '  wsag create --template advance-reservation --set NodeCount=4 --set StartTime=2026-12-01T08:00:00Z ' +
      '--set EndTime=2026-12-01T12:00:00Z',
    '  wsag create --template deadline-job --set NodeCount=2 --run /opt/apps/cm5/run --arg=--years=10 --env ' +
      'OMP_NUM_THREADS=2 --dry-run',
    '                                   # the offer a server in front of Slurm runs (WSAG_SLURM_EXECUTABLES)',
  ],
  options: {
    ...urlOption,
    ...jsonOption,
    ...offerOptions,
    'dry-run': { type: 'boolean' },
  },
  positionals: [],
  async run(args, ctx) {
    const ref = args.string('template');
    if (!ref) throw new UsageError('--template NAME is required (list them with: wsag templates)');
    const settings = args.list('set').map((s) => parseSetting(s));
    const client = ctx.client(serverUrl(args, ctx.env));
    const { template, offer } = await templateOffer(client, ref, settings, additionsOf(args));
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
    // Who the server took the caller for: with TLS, the user behind a proxy certificate.
    const { initiator } = await client.request<{ initiator: string }>(
      `/api/agreements/${encodeURIComponent(created.agreementId)}`,
      'reading the agreement',
    );
    ctx.out(`  as        ${initiator}`);
    ctx.out(`see its state with: wsag state ${created.agreementId}`);
  },
};
