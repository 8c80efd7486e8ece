import { parseXml } from '../xml/libxml.js';
import { guardRawXml } from '../xml/raw-guard.js';
import { ns } from '../xml/namespaces.js';
import { appendSignature } from './xml-signature-build.js';
import { checkSigningCredentials, type SigningCredentials } from './xml-signature-credentials.js';

/**
 * Signed usage records. GFD.98 leaves no place for a signature inside a usage
 * record, so the signed form wraps it: `srv:SignedUsageRecord` holds the ur:JobUsageRecord,
 * unchanged, and an enveloped ds:Signature over the whole document, made exactly as the
 * provider signs agreements (exclusive c14n, SHA-256, the signer's chain in ds:KeyInfo).
 * `xmlsec1 --verify` checks it; the record inside validates against the GFD.98 schema.
 */
export function signUsageRecord(recordXml: string, signer: SigningCredentials): string {
  const { method, keyInfoChain } = checkSigningCredentials(signer);
  const wrapped = `<srv:SignedUsageRecord xmlns:srv="${ns.srv}">${recordXml}</srv:SignedUsageRecord>`;
  const doc = parseXml(
    guardRawXml(Buffer.from(wrapped, 'utf8'), { maxBytes: 1024 * 1024, maxDepth: 32 }),
    'usage record',
    undefined,
    { keepBlanks: true },
  );
  try {
    appendSignature(doc, doc.root, method, signer.key, keyInfoChain);
    return doc.toString({ format: false, noDeclaration: true, encoding: 'utf-8' }).trimEnd();
  } finally {
    doc.dispose();
  }
}
