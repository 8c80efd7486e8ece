import type { CorrectionOutcome } from '../../engine/accounting/index.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { printJson } from '../output.js';

export const correctCommand: Command = {
  name: 'correct',
  summary: 'correct a false violation of a completed agreement (operators)',
  synopsis: 'wsag correct ID --term NAME --reason TEXT [--url URL] [--json]',
  description: [
    'An operator corrects a guarantee verdict the server got wrong: the term NAME of agreement',
    'ID, judged Violated, becomes Fulfilled. The penalty it had credited to the charge account',
    'is taken back by one compensating ledger entry (penalty-withdrawal); the post-runtime',
    'report keeps the original explanation, the correction, who made it and why; the audit',
    'trail gets a guarantee-corrected entry and subscribers are notified. Only the verdicts of',
    'a Complete agreement can be corrected, each once. Sending the same correction again after',
    'a crash finishes it. Goes through POST /api/agreements/ID/corrections (WSAG_ADMINS only).',
    'See docs/operations.md, "Correcting a false violation".',
  ],
  optionHelp: [
    '  --term NAME        the guarantee term to correct (wsag state ID lists them)',
    '  --reason TEXT      why the violation was false (required; kept in the audit trail)',
    urlHelp,
    jsonHelp,
  ],
  examples: ['  wsag correct <ID> --term NodesThroughWindow --reason "node start-up counted as missing nodes"'],
  options: { ...urlOption, ...jsonOption, term: { type: 'string' }, reason: { type: 'string' } },
  positionals: ['ID'],
  async run(args, ctx) {
    const id = args.positionals[0] as string;
    const term = args.string('term');
    const reason = args.string('reason');
    if (!term) throw new UsageError('missing --term NAME: the guarantee term to correct (wsag state ID lists them)');
    if (!reason?.trim())
      throw new UsageError('missing --reason TEXT: say why the violation was false (it is kept in the audit trail)');
    const client = ctx.client(serverUrl(args, ctx.env));
    const outcome = await client.request<CorrectionOutcome>(
      `/api/agreements/${encodeURIComponent(id)}/corrections`,
      `correcting agreement ${id}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ term, reason }),
      },
    );
    if (args.flag('json')) {
      printJson(ctx.out, outcome);
      return;
    }
    ctx.out(`agreement ${id}: ${term} corrected to ${outcome.state}`);
    const w = outcome.withdrawn;
    if (w) ctx.out(`  penalty withdrawn from account ${w.account}: ${w.amount.toFixed(2)} ${w.currency}`);
    else ctx.out('  no penalty had been credited to a charge account');
  },
};
