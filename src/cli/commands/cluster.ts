import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson } from '../output.js';

interface ClusterDoc {
  role: 'leader' | 'standby' | 'single';
  instance?: string;
  leader?: { instance: string; url: string; term: number; since: string; alive?: string };
  lastTakeover?: { previous: string; at: string; gapSeconds: number };
}

export const clusterCommand: Command = {
  name: 'cluster',
  summary: 'who plans: this server alone, or the planning leader of a cluster and its last takeover',
  synopsis: 'wsag cluster [--url URL] [--json]',
  description: [
    'On PostgreSQL several instances serve one cluster (docs/deployment.md, "Several instances"):',
    'one, the planning leader, plans and serves; the others forward to it and take over when it',
    'dies. Shows what the instance at --url sees: its role, the leader the database names (since',
    'when, its term: the leaders the database has seen), and the last takeover with its gap, from',
    "the former leader's last heartbeat to the new leader's announcement. A server on SQLite is",
    'one server, its own leader.',
  ],
  optionHelp: [urlHelp, jsonHelp],
  examples: ['  wsag cluster', '  wsag cluster --json'],
  options: { ...urlOption, ...jsonOption },
  positionals: [],
  async run(args, ctx) {
    const client = ctx.client(serverUrl(args, ctx.env));
    const doc = await client.request<ClusterDoc>('/api/cluster', 'reading the cluster state');
    if (args.flag('json')) return printJson(ctx.out, doc);
    if (doc.role === 'single') {
      ctx.out('one server (no cluster): it plans and serves alone');
      return;
    }
    ctx.out(
      `this instance: ${doc.instance ?? 'unnamed'}, the ${doc.role === 'leader' ? 'planning leader' : 'a standby'}`,
    );
    const leader = doc.leader;
    ctx.out(
      leader
        ? `leader:        ${leader.instance} at ${leader.url}, since ${leader.since} (term ${leader.term})` +
            `${leader.alive ? `, last heartbeat ${leader.alive}` : ''}`
        : 'leader:        none announced yet',
    );
    const takeover = doc.lastTakeover;
    ctx.out(
      takeover
        ? `last takeover: at ${takeover.at} from ${takeover.previous}, ${takeover.gapSeconds.toFixed(2)} s without a ` +
            'leader at most'
        : 'last takeover: none (the first leader)',
    );
  },
};
