import fs from 'node:fs';
import path from 'node:path';
import type { Agreement } from '../../domain/agreement.js';
import {
  unsignedAgreement,
  type AuditReport,
  type SignatureCheck,
  type SignatureVerdict,
} from '../../engine/audit/index.js';
import type { AuditEntry } from '../../engine/ports.js';
import type { ServerStore } from '../../assembly/store.js';

/** What the audit command reads: the audit log and the agreements and negotiations it is about. */
type AuditedStore = Pick<ServerStore, 'audit' | 'agreements' | 'negotiations' | 'close'>;
import { jsonHelp, jsonOption, type Command } from '../command.js';
import type { Args, Env } from '../context.js';
import { CliError, exitCodes, UsageError } from '../errors.js';
import { printJson, shortTime, table } from '../output.js';

const actions = ['verify', 'show', 'export'] as const;

export const auditCommand: Command = {
  name: 'audit',
  summary: "the audit trail: verify it, show an agreement's history, export an agreement",
  synopsis:
    'wsag audit (verify | show ID | export ID [--out FILE]) [--data-dir DIR | --database-url URL] [--ca-file ' +
    'FILE] [--json]',
  description: [
    "Reads the server's database directly (DIR/wsag.db, or the PostgreSQL database of",
    '--database-url), without writing: no server is needed, and a running one is not disturbed.',
    'See docs/security.md, "Audit trail".',
    'verify: checks the hash chain of the audit log (every state change of agreements and',
    "        negotiations), that each stored agreement's document and state are the ones its",
    "        last audit entry recorded, and each agreement's XML signatures against the",
    '        trusted CAs. Prints what is wrong and exits 1 if anything is.',
    'show:   the history of agreement (or negotiation) ID: time, actor, action, details.',
    'export: the agreement document of ID as stored (signed, when the server signs), for',
    '        a third party; on stdout, or into FILE with --out.',
  ],
  optionHelp: [
    "  --data-dir DIR     the server's data directory (env WSAG_DATA_DIR, default ./data)",
    "  --database-url URL the server's PostgreSQL database instead (env WSAG_DATABASE_URL; docs/deployment.md)",
    '  --ca-file FILE     (verify) trusted CA certificates, PEM (env WSAG_CA_FILE,',
    '                     default DIR/pki/ca.pem); without one, signatures are not checked',
    '  --out FILE         (export) write the document into FILE, exactly as stored',
    jsonHelp,
  ],
  examples: ['  wsag audit verify', '  wsag audit show <ID> --json', '  wsag audit export <ID> --out agreement.xml'],
  options: {
    ...jsonOption,
    'data-dir': { type: 'string' },
    'database-url': { type: 'string' },
    'ca-file': { type: 'string' },
    out: { type: 'string' },
  },
  positionals: ['ACTION'],
  optionalPositionals: ['ID'],
  async run(args, ctx) {
    const [action, id] = args.positionals as [string, string | undefined];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use verify, show or export`);
    if (action === 'verify' && id !== undefined)
      throw new UsageError(`unexpected argument "${id}": audit verify checks everything`);
    if (action !== 'verify' && id === undefined) throw new UsageError(`missing ID: wsag audit ${action} ID`);
    if (action !== 'export' && args.string('out') !== undefined) throw new UsageError('--out belongs to audit export');
    const dataDir = path.resolve(args.string('data-dir') ?? (ctx.env.WSAG_DATA_DIR?.trim() || 'data'));
    const databaseUrl = args.string('database-url') ?? (ctx.env.WSAG_DATABASE_URL?.trim() || undefined);
    const store = databaseUrl !== undefined ? await openDatabase(databaseUrl) : await openStore(dataDir);
    try {
      if (action === 'verify') return await verify(store, args, ctx.env, dataDir, ctx.out);
      if (action === 'show') return await show(store, id as string, args.flag('json'), ctx.out);
      return await exportDocument(store, id as string, args.string('out'), ctx.out);
    } finally {
      await store.close();
    }
  },
};

/** Loaded on demand, like `wsag serve`: the client commands need none of the server's modules. */
async function openDatabase(url: string): Promise<AuditedStore> {
  const { PgStore } = await import('../../store/postgres/pg-store.js');
  try {
    return await PgStore.open(url, { readOnly: true });
  } catch (error) {
    throw new CliError(
      `cannot read the database ${url.replace(/:[^:@/]*@/, ':***@')}: ` +
        `${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

async function openStore(dataDir: string): Promise<AuditedStore> {
  const { SqliteStore } = await import('../../store/sqlite-store.js');
  const file = path.join(dataDir, 'wsag.db');
  if (!fs.existsSync(file))
    throw new CliError(`no database at ${file}: point --data-dir (or WSAG_DATA_DIR) at the server's data directory`);
  try {
    return SqliteStore.openReadOnly(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function verify(
  store: AuditedStore,
  args: Args,
  env: Env,
  dataDir: string,
  out: (line: string) => void,
): Promise<number> {
  const { AuditService } = await import('../../engine/audit/audit-service.js');
  const caFile = path.resolve(
    args.string('ca-file') ?? (env.WSAG_CA_FILE?.trim() || path.join(dataDir, 'pki', 'ca.pem')),
  );
  const signatures = await signatureCheck(caFile);
  const service = new AuditService({
    audit: store.audit,
    agreements: store.agreements,
    ...(signatures.check ? { checkSignatures: signatures.check } : {}),
  });
  const report = await service.verify();
  const failed = report.chain.firstBroken !== undefined || report.problems.length > 0;
  if (args.flag('json')) {
    printJson(out, { ok: !failed, ...report, signatures: signatures.status });
  } else {
    printReport(report, signatures.status, out);
  }
  return failed ? exitCodes.failed : exitCodes.ok;
}

function printReport(report: AuditReport, signatures: string, out: (line: string) => void): void {
  const { chain } = report;
  if (chain.firstBroken) {
    out(
      `audit log: ${entriesText(chain.entries)}; BROKEN at row ${chain.firstBroken.seq}: ${chain.firstBroken.reason}`,
    );
  } else {
    out(`audit log: ${entriesText(chain.entries)}, the hash chain holds${chain.head ? ` (head ${chain.head})` : ''}`);
  }
  out(
    `agreements: ${report.agreements} checked against their audit entries` +
      `${report.problems.length === 0 ? ', all match' : ''}`,
  );
  const unsigned =
    report.unsigned === 0
      ? ''
      : `; ${report.unsigned} agreement${report.unsigned === 1 ? ' was' : 's were'} stored unsigned ` +
        '(made while signing was off), their documents as stored';
  out(`signatures: ${signatures}${unsigned}`);
  for (const { agreementId, problem } of report.problems) out(`  agreement ${agreementId}: ${problem}`);
  const count = (chain.firstBroken ? 1 : 0) + report.problems.length;
  out(count === 0 ? 'all well' : `${count} problem${count === 1 ? '' : 's'} found`);
}

/**
 * The signature check of `wsag audit verify`: each agreement's XML signatures must verify,
 * with certificates that lead to a CA in `caFile` at the time the document was written.
 */
async function signatureCheck(caFile: string): Promise<{ check?: SignatureCheck; status: string }> {
  if (!fs.existsSync(caFile)) return { status: `not checked: no CA file (${caFile})` };
  const { TrustStore } = await import('../../crypto/trust-store.js');
  const { isUnsignedAgreement, verifyAgreementSignatures } = await import('../../crypto/xml-signature.js');
  let trust: ReturnType<typeof TrustStore.fromFile>;
  try {
    trust = TrustStore.fromFile(caFile);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  const check = (agreement: Agreement, signedAt: Date): SignatureVerdict => {
    if (isUnsignedAgreement(agreement.document)) return unsignedAgreement;
    try {
      verifyAgreementSignatures(agreement.document, {
        validateChain: (chain, at) => trust.validate(chain, at),
        at: signedAt,
      });
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  return { check, status: `checked against ${caFile}` };
}

async function show(store: AuditedStore, id: string, json: boolean, out: (line: string) => void): Promise<void> {
  const { AuditService } = await import('../../engine/audit/audit-service.js');
  const service = new AuditService({ audit: store.audit, agreements: store.agreements });
  let kind: 'agreement' | 'negotiation' = 'agreement';
  let entries = await service.history(id);
  if (entries.length === 0 && !(await store.agreements.get(id))) {
    kind = 'negotiation';
    entries = await service.negotiationHistory(id);
    if (entries.length === 0 && !(await store.negotiations.get(id)))
      throw new CliError(`no agreement or negotiation "${id}" in the database`);
  }
  if (json) {
    printJson(out, { [`${kind}Id`]: id, entries: entries.map(entryJson) });
    return;
  }
  out(`${kind} ${id}: ${entriesText(entries.length, 'audit ')}`);
  const rows = entries.map((e) => [
    String(e.seq),
    shortTime(e.at.toISOString()),
    e.actor,
    e.action,
    JSON.stringify(e.details),
  ]);
  if (rows.length > 0) for (const line of table(['SEQ', 'TIME', 'ACTOR', 'ACTION', 'DETAILS'], rows, '  ')) out(line);
}

function entriesText(count: number, what = ''): string {
  return `${count} ${what}entr${count === 1 ? 'y' : 'ies'}`;
}

function entryJson(entry: AuditEntry) {
  return { ...entry, at: entry.at.toISOString() };
}

async function exportDocument(
  store: AuditedStore,
  id: string,
  file: string | undefined,
  out: (line: string) => void,
): Promise<void> {
  const agreement = await store.agreements.get(id);
  if (!agreement) throw new CliError(`no agreement "${id}" in the database`);
  if (file === undefined) {
    out(agreement.document);
    return;
  }
  try {
    fs.writeFileSync(file, agreement.document);
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  out(`wrote agreement ${id} (${Buffer.byteLength(agreement.document)} bytes, as stored) to ${file}`);
}
