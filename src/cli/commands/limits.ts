import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, table } from '../output.js';

interface FairUseDoc {
  enabled: boolean;
  party: string;
  exempt?: boolean;
  slaNodes?: number;
  limits?: Record<string, number | undefined>;
  holds?: Record<string, number>;
}

const rowsOf: Array<[limit: string, what: string]> = [
  ['share', 'nodes at one time (most ahead)'],
  ['nodeHours', 'node-hours from now on'],
  ['agreements', 'agreements holding capacity'],
  ['pending', 'pending agreements'],
  ['negotiations', 'open negotiations'],
  ['checkpointBytes', 'checkpoint bytes kept'],
];

export const limitsCommand: Command = {
  name: 'limits',
  summary: "fair use: the site's limits per party, and what you hold against each",
  synopsis: 'wsag limits [--url URL] [--json]',
  description: [
    'No party may hold a site alone (docs/security.md, "Fair use"): a share of the nodes at any',
    'time, node-hours ahead, agreements, pending agreements, negotiations and checkpoint bytes are',
    'bounded per party (WSAG_FAIR_USE). Shows each limit and what the caller holds now; a request',
    'past a limit is refused with FairUseExceeded. Operators are exempt.',
  ],
  optionHelp: [urlHelp, jsonHelp],
  examples: ['  wsag limits'],
  options: { ...urlOption, ...jsonOption },
  positionals: [],
  async run(args, ctx) {
    const client = ctx.client(serverUrl(args, ctx.env));
    const doc = await client.request<FairUseDoc>('/api/fair-use', 'reading the fair-use limits');
    if (args.flag('json')) return printJson(ctx.out, doc);
    if (!doc.enabled) {
      ctx.out(
        `this site sets no fair-use limits (WSAG_FAIR_USE; off by default without TLS): ${doc.party} may hold ` +
          `what the plan has free`,
      );
      return;
    }
    ctx.out(`${doc.party}${doc.exempt ? ' (an operator: exempt)' : ''}; the site has ${doc.slaNodes} SLA nodes`);
    const limits = doc.limits ?? {};
    const rows = rowsOf.map(([limit, what]) => {
      const most =
        limit === 'share' && limits.share !== undefined
          ? Math.max(1, Math.floor(limits.share * (doc.slaNodes ?? 0)))
          : limits[limit];
      return [limit, what, String(doc.holds?.[limit] ?? 0), most === undefined ? 'none' : String(most)];
    });
    for (const line of table(['LIMIT', 'WHAT', 'HELD', 'MOST'], rows)) ctx.out(line);
    if (limits.pendingSeconds !== undefined)
      ctx.out(`a pending agreement not decided within ${limits.pendingSeconds} s is rejected`);
  },
};
