import type { AccountView } from '../../engine/accounting/index.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { money as formatMoney, printJson, shortTime, table } from '../output.js';

const actions = ['list', 'create', 'deposit', 'allocate', 'show', 'statement'] as const;

export const accountCommand: Command = {
  name: 'account',
  summary: 'the bank: accounts, deposits and allocations (operators), balances and statements',
  synopsis:
    'wsag account (list | create ID --owner SUBJECT [--kind user|group|vo] [--currency EUR] [--member SUBJECT ' +
    '...] [--vo VO] [--group G] [--credit-limit N | --allocation-share F]' +
    ' | deposit ID AMOUNT | allocate ID AMOUNT | show ID | statement ID) [--note TEXT] [--key KEY] [--url ' +
    'URL] [--json]',
  description: [
    'Accounts are charged for agreements whose sla:ChargeAccount names them (wsag create',
    '--account ID): the quoted price is held when the agreement is made (or a negotiated offer',
    'holds capacity), and settled when it ends: at actual usage when it completes, penalties',
    'credited and rewards charged as its guarantee terms say. See docs/accounting.md.',
    "create, deposit and allocate are for operators (WSAG_ADMINS); an account's owner and",
    'members, and operators, may show it and read its statement. An allocation is a grant',
    '(the base of an allocation-share overdraft); a deposit is money paid in.',
  ],
  optionHelp: [
    '  --owner SUBJECT    who owns the account (a certificate subject; anonymous without TLS)',
    '  --kind KIND        user (default), group or vo',
    "  --currency CODE    ISO 4217 (default: the server's, EUR)",
    '  --member SUBJECT   who else may charge and read it; repeatable',
    '  --vo VO, --group G the virtual organisation and group it belongs to',
    '  --credit-limit N   it may go N below zero; --allocation-share F: F (0..1) of what was allocated',
    '  --note TEXT        a note on the statement line; --key KEY makes a retried deposit count once',
    urlHelp,
    jsonHelp,
  ],
  examples: [
    '  wsag account create astro --kind vo --owner "/O=Grid/CN=Astro PI" --member "/O=Grid/CN=alice" --vo ' +
      'astro --credit-limit 100',
    '  wsag account allocate astro 5000 --note "SNAC 2026/2"',
    '  wsag account statement astro',
  ],
  options: {
    ...urlOption,
    ...jsonOption,
    owner: { type: 'string' },
    kind: { type: 'string' },
    currency: { type: 'string' },
    member: { type: 'string', multiple: true },
    vo: { type: 'string' },
    group: { type: 'string' },
    'credit-limit': { type: 'string' },
    'allocation-share': { type: 'string' },
    note: { type: 'string' },
    key: { type: 'string' },
  },
  positionals: ['ACTION'],
  optionalPositionals: ['ID', 'AMOUNT'],
  async run(args, ctx) {
    const [action, id, amountText] = args.positionals as [string, string | undefined, string | undefined];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use ${actions.join(', ')}`);
    const client = ctx.client(serverUrl(args, ctx.env));
    const path = (suffix = '') => `/api/accounts/${encodeURIComponent(id as string)}${suffix}`;
    const post = (body: unknown) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (action === 'list') {
      const { accounts } = await client.request<{ accounts: AccountView[] }>('/api/accounts', 'listing accounts');
      if (args.flag('json')) return printJson(ctx.out, { accounts });
      const rows = accounts.map((a) => [
        a.id,
        a.kind,
        a.owner,
        money(a.funds, a.currency),
        money(a.held, a.currency),
        money(a.available, a.currency),
      ]);
      for (const line of table(['ACCOUNT', 'KIND', 'OWNER', 'FUNDS', 'HELD', 'AVAILABLE'], rows)) ctx.out(line);
      return;
    }
    if (id === undefined) throw new UsageError(`missing ID: wsag account ${action} ID`);
    let account: AccountView;
    if (action === 'create') {
      const owner = args.string('owner');
      if (!owner) throw new UsageError('--owner SUBJECT is required: who owns the account');
      const credit = args.string('credit-limit');
      const share = args.string('allocation-share');
      if (credit !== undefined && share !== undefined)
        throw new UsageError('--credit-limit and --allocation-share are alternatives: give one');
      const overdraft =
        credit !== undefined
          ? { kind: 'credit-limit', limit: number(credit, '--credit-limit') }
          : share !== undefined
            ? { kind: 'allocation-share', share: number(share, '--allocation-share') }
            : { kind: 'none' };
      account = await client.request<AccountView>(
        '/api/accounts',
        `creating account ${id}`,
        post({
          id,
          owner,
          kind: args.string('kind') ?? 'user',
          currency: args.string('currency') ?? 'EUR',
          members: args.list('member'),
          overdraft,
          ...(args.string('vo') ? { virtualOrganisation: args.string('vo') } : {}),
          ...(args.string('group') ? { group: args.string('group') } : {}),
        }),
      );
    } else if (action === 'deposit' || action === 'allocate') {
      if (amountText === undefined) throw new UsageError(`missing AMOUNT: wsag account ${action} ID AMOUNT`);
      account = await client.request<AccountView>(
        path(action === 'deposit' ? '/deposits' : '/allocations'),
        `crediting account ${id}`,
        post({
          amount: number(amountText, 'AMOUNT'),
          ...(args.string('note') ? { note: args.string('note') } : {}),
          ...(args.string('key') ? { key: args.string('key') } : {}),
        }),
      );
    } else if (action === 'statement') {
      type Page = {
        account: AccountView;
        entries: Array<{ at: string; kind: string; amount: number; heldChange: number; holdId?: string; note: string }>;
        next?: number;
      };
      // The server sends a statement a page at a time: the whole one is every page's entries.
      let page = await client.request<Page>(path('/statement'), `reading the statement of ${id}`);
      const statement = { account: page.account, entries: [...page.entries] };
      while (page.next !== undefined) {
        page = await client.request<Page>(path(`/statement?after=${page.next}`), `reading the statement of ${id}`);
        statement.entries.push(...page.entries);
      }
      if (args.flag('json')) return printJson(ctx.out, statement);
      const c = statement.account.currency;
      const rows = statement.entries.map((e) => [
        shortTime(e.at),
        e.kind,
        e.amount ? money(e.amount, c) : '',
        e.heldChange ? money(e.heldChange, c) : '',
        e.holdId ?? '',
        e.note,
      ]);
      for (const line of table(['AT', 'KIND', 'AMOUNT', 'HELD', 'HOLD', 'NOTE'], rows)) ctx.out(line);
      return describe(statement.account).forEach((line) => ctx.out(line));
    } else {
      account = await client.request<AccountView>(path(), `reading account ${id}`);
    }
    if (args.flag('json')) return printJson(ctx.out, account);
    for (const line of describe(account)) ctx.out(line);
  },
};

function describe(a: AccountView): string[] {
  const overdraft =
    a.overdraft?.kind === 'credit-limit'
      ? `credit limit ${money(a.overdraftLimit, a.currency)}`
      : a.overdraft?.kind === 'allocation-share'
        ? `${a.overdraft.share * 100} % of the allocation (${money(a.overdraftLimit, a.currency)})`
        : 'none';
  return [
    `account ${a.id} (${a.kind}${a.virtualOrganisation ? `, VO ${a.virtualOrganisation}` : ''}` +
      `${a.group ? `, group ${a.group}` : ''}), owner ${a.owner}`,
    `  funds ${money(a.funds, a.currency)}, held ${money(a.held, a.currency)}, available ` +
      `${money(a.available, a.currency)}`,
    `  allocated ${money(a.allocated, a.currency)}; overdraft: ${overdraft}` +
      `${a.members.length ? `; members: ${a.members.join(', ')}` : ''}`,
  ];
}

/** An amount of the account's currency, as the CLI prints money. */
function money(amount: number, currency: string): string {
  return formatMoney({ amount, currency });
}

function number(text: string, what: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`${what} must be a number, got "${text}"`);
  return value;
}
