import { negotiationOffer } from '../../xml/accepting-offer.js';
import { leaseOffer, type LeaseChange } from '../../xml/lease-offer.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { CliError, exitCodes, UsageError } from '../errors.js';
import { acceptCounterOffer } from '../negotiation.js';
import { printJson, shortTime } from '../output.js';

const actions = ['extend', 'shrink'] as const;

export const leaseCommand: Command = {
  name: 'lease',
  summary: 'change a lease (a reservation agreement): extend its end, shrink its nodes',
  synopsis: 'wsag lease (extend ID --until TIME | shrink ID --nodes N) [--url URL] [--json]',
  description: [
    'A reservation agreement is a lease on its nodes for its window (docs/leases.md). extend',
    "moves the window's end to TIME; shrink gives nodes back. Both renegotiate the agreement",
    '(WS-Agreement Negotiation, Renegotiation): the server grants the change only if its plan',
    'allows it, at the price of the new terms, and the agreement keeps its id; otherwise it says',
    'why and nothing changes. Subscribers hear before a lease ends (WSAG_LEASE_NOTICE_SECONDS).',
  ],
  optionHelp: [
    '  --until TIME       the new end of the window (ISO 8601)',
    '  --nodes N          the nodes to keep',
    urlHelp,
    jsonHelp,
  ],
  examples: ['  wsag lease extend <ID> --until 2026-12-01T18:00:00Z', '  wsag lease shrink <ID> --nodes 2'],
  options: { ...urlOption, ...jsonOption, until: { type: 'string' }, nodes: { type: 'string' } },
  positionals: ['ACTION', 'ID'],
  async run(args, ctx) {
    const [action, id] = args.positionals as [string, string];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use extend or shrink`);
    const change: LeaseChange = {};
    if (action === 'extend') {
      const until = args.string('until');
      if (until === undefined || Number.isNaN(new Date(until).getTime()) || !/T/.test(until))
        throw new UsageError('--until TIME is required: an ISO 8601 time such as 2026-12-01T18:00:00Z');
      change.until = new Date(until);
    } else {
      const nodes = Number(args.string('nodes'));
      if (!Number.isInteger(nodes) || nodes < 1)
        throw new UsageError('--nodes N is required: a whole number of nodes, 1 or more');
      change.nodes = nodes;
    }
    const client = ctx.client(serverUrl(args, ctx.env));
    let offer: string;
    try {
      offer = leaseOffer(await client.agreementDocument(id), change);
    } catch (error) {
      if (error instanceof Error && !('code' in error)) throw new CliError(`agreement ${id}: ${error.message}`);
      throw error;
    }
    const negotiation = await client.initiateNegotiation({ renegotiate: id });
    const answers = await client.negotiate(negotiation.negotiationId, [
      negotiationOffer(offer, { counterOfferTo: id, state: 'Solicited' }),
    ]);
    const acceptable = answers.find((a) => a.state === 'Acceptable');
    if (!acceptable) {
      await client.terminateNegotiation(negotiation.negotiationId);
      const reason = answers.find((a) => a.state === 'Rejected')?.note ?? 'the provider gave no reason';
      ctx.err(`error: lease ${id} not changed: ${reason}`);
      return exitCodes.failed;
    }
    await acceptCounterOffer(client, negotiation, acceptable);
    const what = change.until
      ? `extended until ${shortTime(change.until.toISOString())}`
      : `shrunk to ${change.nodes} node${change.nodes === 1 ? '' : 's'}`;
    if (args.flag('json'))
      return printJson(ctx.out, {
        agreementId: id,
        ...(change.until ? { until: change.until.toISOString() } : { nodes: change.nodes }),
        price: acceptable.price,
      });
    ctx.out(
      `lease ${id} ${what}` +
        `${acceptable.price ? ` (price now ${acceptable.price.amount.toFixed(2)} ${acceptable.price.currency})` : ''}`,
    );
    return exitCodes.ok;
  },
};
