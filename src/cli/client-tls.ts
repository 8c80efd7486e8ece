import fs from 'node:fs';
import type { ClientTls } from '../client/tls-fetch.js';
import { credentialFromPem, type Credential } from '../crypto/credentials.js';
import { certificatePem, privateKeyPem } from '../crypto/pem.js';
import type { Env } from './context.js';
import { UsageError } from './errors.js';

export const clientTlsHelp = [
  'Over HTTPS (a --url starting with https://) the CLI presents a client certificate:',
  '  WSAG_CERT   PEM file: certificate or proxy, then its issuers (default: $X509_USER_PROXY)',
  '  WSAG_KEY    PEM private key (default: the key inside WSAG_CERT, as in a proxy file)',
  "  WSAG_CA     PEM bundle of the CAs that may sign the server's certificate",
];

/** The client certificate, key and CA bundle for HTTPS, from the environment; files that are named must exist. */
export function clientTls(env: Env): ClientTls & { credential: Credential } {
  const certName = env.WSAG_CERT ? 'WSAG_CERT' : 'X509_USER_PROXY';
  const certFile = env.WSAG_CERT || env.X509_USER_PROXY;
  if (!certFile)
    throw new UsageError(
      'an https:// URL needs a client certificate: set WSAG_CERT (or X509_USER_PROXY) to a PEM file, e.g. a ' +
        'proxy from `wsag cert proxy`',
    );
  if (!env.WSAG_CA)
    throw new UsageError(
      "an https:// URL needs WSAG_CA: the PEM bundle of the CAs that may sign the server's certificate",
    );
  let credential: Credential;
  try {
    credential = credentialFromPem(
      read(certFile, certName),
      env.WSAG_KEY ? read(env.WSAG_KEY, 'WSAG_KEY') : undefined,
      {
        source: `${certName} ${certFile}`,
        ...(env.WSAG_KEY ? { keySource: `WSAG_KEY ${env.WSAG_KEY}` } : {}),
      },
    );
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return {
    credential,
    cert: [credential.certificate, ...credential.chain].map(certificatePem).join(''),
    key: privateKeyPem(credential.privateKey),
    ca: read(env.WSAG_CA, 'WSAG_CA'),
  };
}

function read(file: string, name: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`${name}: cannot read ${file}`);
  }
}
