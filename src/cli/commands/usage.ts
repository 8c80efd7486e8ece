import fs from 'node:fs';
import { urNs } from '../../xml/usage-record-writer.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { printJson, shortTime, table } from '../output.js';

const actions = ['list', 'show', 'export'] as const;

export const usageCommand: Command = {
  name: 'usage',
  summary: 'usage records (OGF GFD.98) of ended agreements: list, show one, export them all',
  synopsis: 'wsag usage (list | show AGREEMENT [--signed] | export) [--out FILE] [--url URL] [--json]',
  description: [
    'Every agreement that ends Complete or Terminated gets one OGF Usage Record: who ran what,',
    'on how many nodes and processors, from when to when, its status and its charge. The',
    "initiator reads its own records, operators everyone's. See docs/accounting.md.",
    'show:   one record as its XML document (--signed: the provider-signed form, when the',
    '        server signs agreements; xmlsec1 --verify checks it).',
    'export: every record the caller may read as one ur:UsageRecords document.',
  ],
  optionHelp: [
    '  --signed           the provider-signed record',
    '  --out FILE         write the document to FILE instead of standard output',
    urlHelp,
    jsonHelp,
  ],
  examples: [
    '  wsag usage list',
    '  wsag usage show <ID> --signed --out record.xml',
    '  wsag usage export --out usage.xml',
  ],
  options: { ...urlOption, ...jsonOption, signed: { type: 'boolean' }, out: { type: 'string' } },
  positionals: ['ACTION'],
  optionalPositionals: ['AGREEMENT'],
  async run(args, ctx) {
    const [action, id] = args.positionals as [string, string | undefined];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use ${actions.join(', ')}`);
    const client = ctx.client(serverUrl(args, ctx.env));
    const write = (text: string) => {
      const out = args.string('out');
      if (out) {
        fs.writeFileSync(out, `${text}\n`);
        ctx.out(`wrote ${out}`);
      } else ctx.out(text);
    };
    if (action === 'show') {
      if (id === undefined) throw new UsageError('missing AGREEMENT: wsag usage show AGREEMENT');
      write(
        await client.requestText(
          `/api/usage/${encodeURIComponent(id)}${args.flag('signed') ? '?signed=1' : ''}`,
          `reading the usage record of ${id}`,
        ),
      );
      return;
    }
    if (id !== undefined) throw new UsageError(`unexpected argument "${id}"`);
    const records = await client.allPages<{
      agreementId: string;
      initiator: string;
      createdAt: string;
      signed: boolean;
    }>('/api/usage?limit=1000', 'listing usage records');
    if (action === 'list') {
      if (args.flag('json')) return printJson(ctx.out, { records });
      for (const line of table(
        ['AGREEMENT', 'INITIATOR', 'CREATED', 'SIGNED'],
        records.map((r) => [r.agreementId, r.initiator, shortTime(r.createdAt), r.signed ? 'yes' : 'no']),
      ))
        ctx.out(line);
      ctx.out(`${records.length} usage record${records.length === 1 ? '' : 's'}`);
      return;
    }
    const documents: string[] = [];
    for (const r of records)
      documents.push(
        await client.requestText(
          `/api/usage/${encodeURIComponent(r.agreementId)}`,
          `reading the usage record of ${r.agreementId}`,
        ),
      );
    write(`<ur:UsageRecords xmlns:ur="${urNs}">${documents.join('')}</ur:UsageRecords>`);
  },
};
