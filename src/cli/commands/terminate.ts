import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson } from '../output.js';

export const terminateCommand: Command = {
  name: 'terminate',
  summary: 'terminate an agreement',
  synopsis: 'wsag terminate ID [--reason TEXT] [--url URL] [--json]',
  description: [
    'Terminates the agreement (WS-Agreement Terminate): the provider stops the service and',
    "releases its capacity. Prints the agreement's new state. Terminating an agreement that",
    'is already Terminated fails with InvalidStateTransition.',
  ],
  optionHelp: [
    '  --reason TEXT      why (recorded by the server; default "terminated by the initiator")',
    urlHelp,
    jsonHelp,
  ],
  options: { ...urlOption, ...jsonOption, reason: { type: 'string' } },
  positionals: ['ID'],
  async run(args, ctx) {
    const id = args.positionals[0] as string;
    const client = ctx.client(serverUrl(args, ctx.env));
    await client.terminate(id, args.string('reason'));
    const status = await client.state(id);
    if (args.flag('json')) {
      printJson(ctx.out, { agreementId: id, ...status });
      return;
    }
    ctx.out(`agreement ${id}: ${status.state}`);
  },
};
