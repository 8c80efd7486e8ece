import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, table } from '../output.js';

export const stateCommand: Command = {
  name: 'state',
  summary: "show an agreement's state and its term states",
  synopsis: 'wsag state ID [--url URL] [--json]',
  description: [
    'Shows the agreement state (Observed, Terminated, ...), the state of each service term',
    '(NotReady, Ready, Completed) and of each guarantee term (NotDetermined, Fulfilled, Violated).',
  ],
  optionHelp: [urlHelp, jsonHelp],
  options: { ...urlOption, ...jsonOption },
  positionals: ['ID'],
  async run(args, ctx) {
    const id = args.positionals[0] as string;
    const status = await ctx.client(serverUrl(args, ctx.env)).state(id);
    if (args.flag('json')) {
      printJson(ctx.out, { agreementId: id, ...status });
      return;
    }
    ctx.out(`agreement ${id}: ${status.state}`);
    const rows = [
      ...status.serviceTerms.map((t) => ['service', t.termName, t.state]),
      ...status.guaranteeTerms.map((t) => ['guarantee', t.termName, t.state]),
    ];
    if (rows.length) for (const line of table(['TERM', 'NAME', 'STATE'], rows, '  ')) ctx.out(line);
  },
};
