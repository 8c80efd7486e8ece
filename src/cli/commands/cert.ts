import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCredential, proxyFilePem, writePrivateFile, type Credential } from '../../crypto/credentials.js';
import { demoServerAltNames } from '../../crypto/demo-names.js';
import type { DemoFile } from '../../crypto/demo-pki.js';
import { keyTypes, type KeyType } from '../../crypto/keys.js';
import { jsonHelp, jsonOption, type Command } from '../command.js';
import type { Args, CommandContext, Env } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, table } from '../output.js';

const actions = ['proxy', 'demo'] as const;
type Action = (typeof actions)[number];

/** Options that belong to one action only (the others are shared: --key-type, --json). */
const actionOptions: Record<Action, string[]> = {
  proxy: ['cert', 'key', 'hours', 'path-length', 'out', 'passphrase-file'],
  demo: ['dir', 'force'],
};

export const defaultProxyHours = 12;

export const certCommand: Command = {
  name: 'cert',
  summary: 'certificates: issue an RFC 3820 proxy; make a demo PKI for HTTPS',
  synopsis:
    'wsag cert (proxy [--cert FILE] [--key FILE] [--hours H] [--path-length N] [--out FILE] | demo [--dir ' +
    'DIR] [--force]) [--key-type rsa|ec] [--json]',
  description: [
    'proxy: issues an RFC 3820 proxy certificate from your user certificate (or from a proxy,',
    '       for a proxy of a proxy) and writes one PEM file in the Globus layout: the proxy',
    '       certificate, its new private key, then the issuing chain. The file is readable by',
    '       you only (0600). Its subject is yours plus CN=<serial number>; it is valid from five',
    '       minutes ago for --hours, never past your certificate. Use it as the client',
    '       certificate over HTTPS (WSAG_CERT or X509_USER_PROXY).',
    'demo:  makes a demo PKI for trying HTTPS with client certificates: a CA (ca.pem, ca.key),',
    `       a server certificate (server.pem, server.key; subjectAltName ${demoServerAltNames.join(', ')})`,
    '       and two users (alice.pem/alice.key, bob.pem/bob.key). Existing files are kept',
    '       (and checked); missing ones are made. --force makes a new PKI, replacing all.',
    "       Keys are written 0600. Not for production: use your CA's certificates there",
    '       (docs/security.md).',
  ],
  optionHelp: [
    '  --cert FILE        (proxy) your certificate, PEM, then its chain (default: $X509_USER_CERT,',
    '                     else ~/.globus/usercert.pem); a proxy file to make a proxy of a proxy',
    '  --key FILE         (proxy) its private key (default: the key inside --cert, as in a proxy',
    '                     file, else $X509_USER_KEY, else ~/.globus/userkey.pem)',
    '  --passphrase-file FILE',
    '                     (proxy) the passphrase of an encrypted key (first line of FILE)',
    `  --hours H          (proxy) lifetime in hours, fractions allowed (default ${defaultProxyHours})`,
    '  --path-length N    (proxy) how many proxies may be made from this one (default: no limit)',
    '  --out FILE         (proxy) where to write it (default: $X509_USER_PROXY, else',
    `                     ${path.join(os.tmpdir(), 'x509up_u<uid>')} as grid-proxy-init does)`,
    '  --dir DIR          (demo) where the files go (default: $WSAG_DATA_DIR/pki, else ./data/pki:',
    '                     where wsag-server looks for them)',
    '  --force            (demo) replace existing files with a new PKI',
    '  --key-type TYPE    rsa (RSA 2048) or ec (ECDSA P-256); default for proxy: the type of',
    "                     the issuer's key; for demo: ec",
    jsonHelp,
  ],
  examples: [
    '  wsag cert demo',
    '  wsag cert proxy --cert data/pki/alice.pem --key data/pki/alice.key --hours 12 --out alice-proxy.pem',
    '  wsag cert proxy --cert alice-proxy.pem --hours 1 --path-length 0 --out alice-proxy2.pem',
  ],
  options: {
    ...jsonOption,
    cert: { type: 'string' },
    key: { type: 'string' },
    'passphrase-file': { type: 'string' },
    hours: { type: 'string' },
    'path-length': { type: 'string' },
    out: { type: 'string', short: 'o' },
    dir: { type: 'string' },
    force: { type: 'boolean' },
    'key-type': { type: 'string' },
  },
  positionals: ['ACTION'],
  async run(args, ctx) {
    const [action] = args.positionals as [string];
    if (!(actions as readonly string[]).includes(action))
      throw new UsageError(`unknown action "${action}": use proxy or demo`);
    for (const other of actions.filter((a) => a !== action)) {
      for (const option of actionOptions[other]) {
        if (args.string(option) !== undefined || args.flag(option))
          throw new UsageError(`--${option} belongs to cert ${other}, not cert ${action}`);
      }
    }
    if (action === 'proxy') await proxy(args, ctx);
    else await demo(args, ctx);
  },
};

async function proxy(args: Args, ctx: CommandContext): Promise<void> {
  // Loaded here: the X.509 code is heavy, and `wsag --help` should not wait for it.
  const [{ certificateFacts }, { gridDn }, { issueProxy, ProxyIssueError }] = await Promise.all([
    import('../../crypto/certificate-facts.js'),
    import('../../crypto/distinguished-name.js'),
    import('../../crypto/proxy.js'),
  ]);
  const hours = hoursOption(args);
  const pathLength = pathLengthOption(args);
  const keyType = keyTypeOption(args);
  const home = ctx.env.HOME || os.homedir();
  const certFile = args.string('cert') ?? (ctx.env.X509_USER_CERT || path.join(home, '.globus', 'usercert.pem'));
  const outFile = args.string('out') ?? defaultProxyFile(ctx.env);
  const passphraseFile = args.string('passphrase-file');
  const passphrase = passphraseFile === undefined ? undefined : readPassphrase(passphraseFile);

  const issuer = loadIssuer(certFile, args.string('key'), ctx.env, home, passphrase);
  let issued: Awaited<ReturnType<typeof issueProxy>>;
  try {
    issued = await issueProxy({
      issuerCert: issuer.certificate,
      issuerKey: issuer.privateKey,
      hours,
      ...(pathLength !== undefined ? { pathLength } : {}),
      ...(keyType !== undefined ? { keyType } : {}),
    });
  } catch (error) {
    if (error instanceof ProxyIssueError) throw new CliError(`cannot issue a proxy from ${certFile}: ${error.message}`);
    throw error;
  }
  const credential: Credential = { ...issued, chain: [issuer.certificate, ...issuer.chain] };
  try {
    writePrivateFile(outFile, proxyFilePem(credential));
  } catch (error) {
    throw new CliError(`cannot write ${outFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }

  const facts = certificateFacts(issued.certificate);
  const identity = gridDn(credential.chain.find((c) => !certificateFacts(c).proxyCertInfo) ?? issuer.certificate);
  const summary = {
    file: path.resolve(outFile),
    subject: facts.dn,
    issuer: facts.issuerDn,
    identity,
    notBefore: facts.notBefore.toISOString(),
    notAfter: facts.notAfter.toISOString(),
    ...(pathLength !== undefined ? { pathLength } : {}),
    keyType: issued.privateKey.asymmetricKeyType === 'ec' ? 'ec' : 'rsa',
    serialNumber: issued.certificate.serialNumber,
  };
  if (args.flag('json')) {
    printJson(ctx.out, summary);
    return;
  }
  const cut = facts.notAfter.getTime() === certificateFacts(issuer.certificate).notAfter.getTime();
  ctx.out(`wrote proxy ${summary.subject} to ${outFile} (mode 0600)`);
  for (const line of table(
    undefined,
    [
      ['identity', identity],
      ['valid', `${summary.notBefore} to ${summary.notAfter}${cut ? " (cut at the issuer's expiry)" : ''}`],
      [
        'path length',
        pathLength === undefined ? 'no limit' : `${pathLength} more prox${pathLength === 1 ? 'y' : 'ies'} below it`,
      ],
      [
        'layout',
        `proxy certificate, its ${summary.keyType.toUpperCase()} key, then ${credential.chain.length} issuing ` +
          `certificate(s)`,
      ],
    ],
    '  ',
  ))
    ctx.out(line);
  ctx.out(`use it: WSAG_CERT=${outFile} WSAG_CA=<the server's CA bundle> wsag templates --url https://HOST:PORT`);
}

/**
 * The issuer's credential: --key, else a key inside the --cert file (a proxy file), else $X509_USER_KEY or
 * ~/.globus/userkey.pem.
 */
function loadIssuer(
  certFile: string,
  keyOption: string | undefined,
  env: Env,
  home: string,
  passphrase: string | undefined,
): Credential {
  let keyFile = keyOption;
  if (keyFile === undefined) {
    const certText = fs.existsSync(certFile) ? fs.readFileSync(certFile, 'utf8') : '';
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(certText))
      keyFile = env.X509_USER_KEY || path.join(home, '.globus', 'userkey.pem');
  }
  try {
    return loadCredential(certFile, keyFile, passphrase);
  } catch (error) {
    const message = (error as Error).message;
    const hint = /passphrase is needed/.test(message) ? ' (give it with --passphrase-file FILE)' : '';
    throw new CliError(`${message}${hint}`);
  }
}

/** $X509_USER_PROXY, else x509up_u<uid> in the temporary directory (the Globus convention). */
export function defaultProxyFile(env: Env): string {
  if (env.X509_USER_PROXY) return env.X509_USER_PROXY;
  const uid = typeof process.getuid === 'function' ? String(process.getuid()) : os.userInfo().username;
  return path.join(os.tmpdir(), `x509up_u${uid}`);
}

async function demo(args: Args, ctx: CommandContext): Promise<void> {
  const { createDemoPki, DemoPkiConflict } = await import('../../crypto/demo-pki.js');
  const keyType = keyTypeOption(args) ?? 'ec';
  const defaultDir = path.join(ctx.env.WSAG_DATA_DIR || 'data', 'pki');
  const dir = args.string('dir') ?? defaultDir;
  let files: DemoFile[];
  try {
    files = await createDemoPki({ dir, force: args.flag('force'), keyType });
  } catch (error) {
    if (error instanceof DemoPkiConflict) throw new CliError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code)
      throw new CliError(
        `cannot write the demo PKI in ${dir}: ${code} ${(error as NodeJS.ErrnoException).path ?? ''}`.trim(),
      );
    throw error;
  }
  if (args.flag('json')) {
    printJson(ctx.out, {
      dir: path.resolve(dir),
      files: files.map((f) => ({
        ...f,
        certFile: path.resolve(f.certFile),
        keyFile: path.resolve(f.keyFile),
        notAfter: f.notAfter.toISOString(),
      })),
    });
    return;
  }
  const created = files.filter((f) => f.state === 'created').length;
  ctx.out(
    created === 0
      ? `demo PKI in ${dir}: all files exist, nothing to do`
      : `demo PKI in ${dir}: made ${created} certificate(s) with keys, kept ${files.length - created}`,
  );
  for (const line of table(
    ['', 'certificate', 'key', 'subject', 'valid until'],
    files.map((f) => [f.state, f.certFile, f.keyFile, f.subject, f.notAfter.toISOString().slice(0, 10)]),
    '  ',
  ))
    ctx.out(line);

  const file = (party: string, ext: string): string => path.join(dir, `${party}.${ext}`);
  // The server finds the files itself when they are where it looks by default.
  const serverEnv =
    path.resolve(dir) === path.resolve(defaultDir)
      ? ''
      : `WSAG_CA_FILE=${file('ca', 'pem')} WSAG_TLS_CERT=${file('server', 'pem')} WSAG_TLS_KEY=` +
        `${file('server', 'key')} `;
  const proxyFile = file('alice-proxy', 'pem');
  ctx.out('');
  ctx.out('next:');
  ctx.out(`  ${serverEnv}WSAG_TLS_PORT=8443 npm start`);
  ctx.out('      serves HTTPS on port 8443 too; callers show a client certificate or proxy from this CA');
  ctx.out(
    `  wsag cert proxy --cert ${file('alice', 'pem')} --key ${file('alice', 'key')} --hours 12 --out ${proxyFile}`,
  );
  ctx.out(`  WSAG_CERT=${proxyFile} WSAG_CA=${file('ca', 'pem')} wsag templates --url https://localhost:8443`);
  ctx.out(
    `      calls the server as ${files.find((f) => f.party === 'alice')?.subject ?? 'alice'} (operators: ` +
      `WSAG_ADMINS=<subject>)`,
  );
}

function hoursOption(args: Args): number {
  const text = args.string('hours');
  if (text === undefined) return defaultProxyHours;
  const value = /^(\d+(\.\d*)?|\.\d+)$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isFinite(value) || value <= 0)
    throw new UsageError(`--hours must be a number of hours greater than 0, got "${text}"`);
  return value;
}

function pathLengthOption(args: Args): number | undefined {
  const text = args.string('path-length');
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()))
    throw new UsageError(`--path-length must be a whole number, 0 or more, got "${text}"`);
  return Number(text.trim());
}

function keyTypeOption(args: Args): KeyType | undefined {
  const text = args.string('key-type');
  if (text === undefined) return undefined;
  if (!(keyTypes as readonly string[]).includes(text))
    throw new UsageError(`--key-type must be rsa or ec, got "${text}"`);
  return text as KeyType;
}

function readPassphrase(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '';
  } catch (error) {
    throw new CliError(
      `cannot read the passphrase file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}
