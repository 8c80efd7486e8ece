import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, table } from '../output.js';

export const voCommand: Command = {
  name: 'vo',
  summary: "VO usage SLAs: each VO, group and user's share against its usage this epoch (operators)",
  synopsis: 'wsag vo [--url URL] [--json]',
  description: [
    "The site's usage policy (WSAG_VO_POLICY_FILE, docs/vo-policy.md) grants each VO a share of",
    "the site over an epoch, each group a share of its VO's, each user a share of the group's.",
    "Shows, for the current epoch, each one's limit kind, share of the site, entitlement and",
    'what is used or booked, in node-hours.',
  ],
  optionHelp: [urlHelp, jsonHelp],
  examples: ['  wsag vo'],
  options: { ...urlOption, ...jsonOption },
  positionals: [],
  async run(args, ctx) {
    const client = ctx.client(serverUrl(args, ctx.env));
    const doc = await client.request<{
      policy: boolean;
      epoch?: { start: string; end: string };
      shares: Array<{
        path: string;
        level: string;
        limit: string;
        share: number;
        entitledNodeHours: number;
        usedNodeHours: number;
      }>;
    }>('/api/vo', 'reading the VO shares');
    if (args.flag('json')) return printJson(ctx.out, doc);
    if (!doc.policy || !doc.epoch) {
      ctx.out(
        'this site has no VO usage policy: no VO, group or user is held to a share (set one with ' +
          'WSAG_VO_POLICY_FILE, docs/vo-policy.md)',
      );
      return;
    }
    ctx.out(`epoch ${doc.epoch.start} to ${doc.epoch.end}`);
    const rows = doc.shares.map((s) => [
      s.path,
      s.level,
      s.limit,
      `${(s.share * 100).toFixed(1)} %`,
      s.entitledNodeHours.toFixed(1),
      s.usedNodeHours.toFixed(1),
      s.entitledNodeHours > 0 ? `${((s.usedNodeHours / s.entitledNodeHours) * 100).toFixed(0)} %` : '',
    ]);
    for (const line of table(['SHARE', 'LEVEL', 'LIMIT', 'OF_SITE', 'ENTITLED_NH', 'USED_NH', 'USED'], rows))
      ctx.out(line);
  },
};
