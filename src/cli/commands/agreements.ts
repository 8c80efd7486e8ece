import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, shortTime, table } from '../output.js';

export const agreementsCommand: Command = {
  name: 'agreements',
  summary: 'list your agreements',
  synopsis: 'wsag agreements [--state STATE] [--url URL] [--json]',
  description: [
    'Lists the agreements you initiated: id, state, template, nodes, and the planned',
    "start and end (UTC). Operators see every party's. The server answers in pages of up to",
    '1,000 (GET /api/agreements?limit=&after=&state=); this command reads them all.',
  ],
  optionHelp: [
    '  --state STATE      only agreements in this state (Pending, Observed, Complete, Terminated, ...)',
    urlHelp,
    jsonHelp,
  ],
  options: { ...urlOption, ...jsonOption, state: { type: 'string' } },
  positionals: [],
  async run(args, ctx) {
    const state = args.string('state');
    const agreements = await ctx.client(serverUrl(args, ctx.env)).agreements(state === undefined ? {} : { state });
    if (args.flag('json')) {
      printJson(ctx.out, agreements);
      return;
    }
    if (agreements.length === 0) {
      ctx.out('no agreements yet (create one with: wsag create --template NAME)');
      return;
    }
    const rows = agreements.map((a) => [
      a.id,
      a.state,
      a.template,
      String(a.nodes),
      shortTime(a.start),
      shortTime(a.end),
    ]);
    for (const line of table(['ID', 'STATE', 'TEMPLATE', 'NODES', 'START', 'END'], rows)) ctx.out(line);
  },
};
