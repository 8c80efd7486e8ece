import { UsageError } from '../errors.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, table } from '../output.js';

interface PriceListDoc {
  currency: string;
  nodeHour: number;
  preparatoryFeeRate: number;
  levelFactors: Record<string, number>;
  curve: Array<{ load: number; factor: number }>;
  outlook: Array<{ start: string; end: string; load: number; factor: number; nodeHour: number }>;
}

export const pricesCommand: Command = {
  name: 'prices',
  summary: 'the published prices: list price, price curve, and the load and price of the hours ahead',
  synopsis: 'wsag prices [--hours N] [--url URL] [--json]',
  description: [
    'Demand pricing (docs/pricing.md): a slot costs nodes x hours x the node-hour list price x the',
    "guarantee level's factor x the price curve's factor at the plan's load over the slot. Shows the",
    'list price, the level factors and the curve, then for each hour ahead the load booked and the',
    'price of a node-hour at level Legacy: a flexible customer picks a cheaper hour.',
  ],
  optionHelp: ['  --hours N          hours ahead to show (default 24)', urlHelp, jsonHelp],
  examples: ['  wsag prices --hours 12'],
  options: { ...urlOption, ...jsonOption, hours: { type: 'string' } },
  positionals: [],
  async run(args, ctx) {
    const hours = args.string('hours') ?? '24';
    if (!/^[0-9]+$/.test(hours) || Number(hours) < 1 || Number(hours) > 744)
      throw new UsageError(`--hours expects a whole number from 1 to 744, got "${hours}"`);
    const client = ctx.client(serverUrl(args, ctx.env));
    const doc = await client.request<PriceListDoc>(`/api/prices?hours=${hours}`, 'reading the prices');
    if (args.flag('json')) return printJson(ctx.out, doc);
    ctx.out(
      `list price ${doc.nodeHour.toFixed(2)} ${doc.currency} per node-hour; levels ${Object.entries(doc.levelFactors)
        .map(([level, f]) => `${level} x${f}`)
        .join(', ')}`,
    );
    const curve = doc.curve.map((p) => `${p.load}:${p.factor}`).join(', ');
    ctx.out(`price curve (load -> factor): ${curve || 'none (prices ignore the load)'}`);
    const rows = doc.outlook.map((o) => [
      o.start,
      `${(o.load * 100).toFixed(1)} %`,
      `x${o.factor.toFixed(3)}`,
      `${o.nodeHour.toFixed(2)} ${doc.currency}`,
    ]);
    for (const line of table(['FROM', 'LOAD', 'FACTOR', 'NODE_HOUR'], rows)) ctx.out(line);
  },
};
