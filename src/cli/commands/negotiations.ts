import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { money, printJson, shortTime, table } from '../output.js';

export const negotiationsCommand: Command = {
  name: 'negotiations',
  summary: "list your negotiations, or one negotiation's offers",
  synopsis: 'wsag negotiations [ID] [--url URL] [--json]',
  description: [
    "Without ID: your negotiations (operators see everyone's): id, state, rounds, offers, the",
    "agreement it concluded with, and when it ends. With ID: that negotiation's offers in",
    'order: offer id, who made it, state, the offer it answers, price, and its hold.',
    'Read from the JSON views /api/negotiations and /api/negotiations/ID.',
  ],
  optionHelp: [urlHelp, jsonHelp],
  examples: ['  wsag negotiations', '  wsag negotiations <NID>'],
  options: { ...urlOption, ...jsonOption },
  positionals: [],
  optionalPositionals: ['ID'],
  async run(args, ctx) {
    const client = ctx.client(serverUrl(args, ctx.env));
    const id = args.positionals[0];
    if (id !== undefined) {
      const negotiation = await client.negotiation(id);
      if (args.flag('json')) return printJson(ctx.out, negotiation);
      const agreement = negotiation.agreementCreated ? `, agreement ${negotiation.agreementCreated}` : '';
      ctx.out(
        `negotiation ${negotiation.id}: ${negotiation.state}${agreement}` +
          `${negotiation.closedBecause ? ` (closed: ${negotiation.closedBecause})` : ''}`,
      );
      const rows = negotiation.offers.map((o) => [
        o.offerId,
        o.creator === 'NegotiationResponder' ? 'provider' : 'you',
        o.state,
        o.counterOfferTo,
        money(o.price),
        o.hold ? `${o.hold.state} ${o.hold.nodes} nodes ${shortTime(o.hold.start)}..${shortTime(o.hold.end)}` : '',
      ]);
      for (const line of table(['OFFER', 'BY', 'STATE', 'ANSWERS', 'PRICE', 'HOLD'], rows, '  ')) ctx.out(line);
      return;
    }
    const negotiations = await client.negotiations();
    if (args.flag('json')) return printJson(ctx.out, negotiations);
    if (negotiations.length === 0) {
      ctx.out('no negotiations yet (start one with: wsag negotiate --template NAME --advisory)');
      return;
    }
    const rows = negotiations.map((n) => [
      n.id,
      n.type,
      n.state,
      String(n.rounds),
      String(n.offers.length),
      n.agreementCreated ?? '',
      shortTime(n.expiresAt),
    ]);
    for (const line of table(['ID', 'TYPE', 'STATE', 'ROUNDS', 'OFFERS', 'AGREEMENT', 'ENDS'], rows)) ctx.out(line);
  },
};
