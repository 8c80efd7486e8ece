import fs from 'node:fs';
import type { ClientTls } from '../client/tls-fetch.js';
import type { Env } from './context.js';
import { UsageError } from './errors.js';

export const clientTlsHelp = [
  'Over HTTPS (a --url starting with https://) the CLI presents a client certificate:',
  '  WSAG_CERT   PEM file: certificate or proxy, then its issuers (default: $X509_USER_PROXY)',
  '  WSAG_KEY    PEM private key (default: the key inside WSAG_CERT, as in a proxy file)',
  '  WSAG_CA     PEM bundle of the CAs that may sign the server\'s certificate',
];

/** The client certificate, key and CA bundle for HTTPS, from the environment; files that are named must exist. */
export function clientTls(env: Env): ClientTls {
  const certFile = env.WSAG_CERT || env.X509_USER_PROXY;
  if (!certFile) throw new UsageError(`an https:// URL needs a client certificate: set WSAG_CERT (or X509_USER_PROXY) to a PEM file, e.g. a proxy from \`wsag cert proxy\``);
  const cert = read(certFile, env.WSAG_CERT ? 'WSAG_CERT' : 'X509_USER_PROXY');
  const key = env.WSAG_KEY ? read(env.WSAG_KEY, 'WSAG_KEY') : pemBlocks(cert, 'PRIVATE KEY');
  if (!key) throw new UsageError(`${certFile} holds no private key: set WSAG_KEY to the key file`);
  if (!env.WSAG_CA) throw new UsageError('an https:// URL needs WSAG_CA: the PEM bundle of the CAs that may sign the server\'s certificate');
  return { cert: pemBlocks(cert, 'CERTIFICATE'), key, ca: read(env.WSAG_CA, 'WSAG_CA') };
}

function read(file: string, name: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`${name}: cannot read ${file}`);
  }
}

/** The PEM blocks of one kind (CERTIFICATE; PRIVATE KEY matches RSA/EC/PKCS#8 keys), in order. */
function pemBlocks(pem: string, kind: string): string {
  const pattern = new RegExp(`-----BEGIN ([A-Z ]*)${kind}-----[\\s\\S]*?-----END \\1${kind}-----`, 'g');
  return (pem.match(pattern) ?? []).join('\n');
}
