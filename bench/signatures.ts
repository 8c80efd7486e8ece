/**
 * `npm run bench` (after the other benches) or `npm run bench:signatures`: signing and
 * verifying agreement documents (src/crypto/xml-signature.ts), with RSA 2048 and ECDSA
 * P-256 keys from an in-process test CA. Each of N agreements (the deadline-job template's
 * default offer, accepted, with its own id: about 2.8 KB before signing) is signed, then
 * verified with the trust store; then countersigned and both signatures verified.
 * Separately, on the same documents, the two parts the totals are made of are timed alone:
 * canonicalisation (the whole document without the signature, and SignedInfo, exclusive
 * C14N in libxml2) and the RSA/ECDSA operation (node:crypto). The rest is parsing, the
 * structure checks, serialising and, in verification, the certificate chain.
 * Prints a Markdown table; `--write` puts it in docs/benchmarks.md in place of the last. BENCH_SIGNATURES=N
 * sets N (default 500).
 */
import fs from 'node:fs';
import { machineHeading, publish, quantiles } from './report.js';
import path from 'node:path';
import type { X509Certificate } from 'node:crypto';
import type { XmlDocument, XmlElement } from 'libxml2-wasm';
import { createCa, issueEndEntity, type Issued } from '../src/crypto/certificate-authority.js';
import { nameFromParts } from '../src/crypto/distinguished-name.js';
import type { KeyType } from '../src/crypto/keys.js';
import { TrustStore } from '../src/crypto/trust-store.js';
import {
  dsNs,
  signatureMethodFor,
  signBytes,
  verifyBytes,
  type SignatureMethod,
} from '../src/crypto/xml-signature-algorithms.js';
import { canonicalSignedInfo, referenceDigest } from '../src/crypto/xml-signature-canonical.js';
import { countersign, signAgreement, verifyAgreementSignatures } from '../src/crypto/xml-signature.js';
import { XmlAgreementWriter } from '../src/xml/agreement-writer.js';
import { c14n } from '../src/xml/item-constraint.js';
import { parseXml, withXml } from '../src/xml/libxml.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { readOffer } from '../src/xml/offer-reader.js';
import { renderTimeTokens } from '../src/xml/template-library.js';

const rounds = Number(process.env.BENCH_SIGNATURES ?? 500);
const now = new Date();

/** Runs `op` on every item (after a warm-up on the first few) and returns each call's time. */
function timeEach<T, R>(items: T[], op: (item: T, i: number) => R): { times: number[]; results: R[] } {
  items.slice(0, 20).forEach(op);
  const times: number[] = [];
  const results = items.map((item, i) => {
    const t0 = performance.now();
    const result = op(item, i);
    times.push(performance.now() - t0);
    return result;
  });
  return { times, results };
}

const source = withXml(fs.readFileSync(path.resolve('templates/deadline-job.xml'), 'utf8'), 'template', (doc) =>
  c14n(doc.root),
);
const offer = withXml(offerFromTemplate(renderTimeTokens(source, now)), 'offer', (doc) => readOffer(doc.root));
const writer = new XmlAgreementWriter();
const agreements = Array.from({ length: rounds }, (_, i) =>
  writer.write(offer, {
    agreementId: `bench-${i}`,
    initiator: '/O=bench/CN=alice',
    responder: 'provider',
    templateId: 'deadline-job-v1',
    templateName: 'deadline-job',
  }),
);

const ca = await createCa({
  subject: nameFromParts([
    ['O', 'bench'],
    ['CN', 'bench CA'],
  ]),
  keyType: 'rsa',
  days: 30,
  now,
});
const store = TrustStore.fromPem(ca.certificate.toString());
const validateChain = (chain: X509Certificate[], at: Date) => store.validate(chain, at);
const party = (cn: string, keyType: KeyType): Promise<Issued> =>
  issueEndEntity({
    ca,
    subject: nameFromParts([
      ['O', 'bench'],
      ['CN', cn],
    ]),
    keyType,
    days: 30,
    now,
    purpose: 'client',
  });

/** Runs `use` on the first signature (and its SignedInfo) of a parsed signed document. */
function withSignature<R>(xml: string, use: (doc: XmlDocument, signature: XmlElement, signedInfo: XmlElement) => R): R {
  const doc = parseXml(xml, 'agreement', undefined, { keepBlanks: true });
  try {
    const signature = doc.get('//ds:Signature', { ds: dsNs }) as XmlElement;
    return use(doc, signature, signature.firstChild as XmlElement);
  } finally {
    doc.dispose();
  }
}

const rows: string[] = [];
const row = (label: string, times: number[], parts: string) => {
  const { median, p99 } = quantiles(times);
  rows.push(`| ${label} | ${times.length} | ${median.toFixed(2)} | ${p99.toFixed(2)} | ${parts} |`);
};
const median = (times: number[]) => quantiles(times).median;

for (const keyType of ['rsa', 'ec'] as const) {
  const keyName = keyType === 'rsa' ? 'RSA 2048' : 'ECDSA P-256';
  const provider = await party('provider', keyType);
  const initiator = await party('alice', keyType);
  const method = signatureMethodFor(provider.privateKey) as SignatureMethod;

  const signing = timeEach(agreements, (xml) =>
    signAgreement(xml, { key: provider.privateKey, chain: [provider.certificate] }),
  );
  const signed = signing.results;
  const verifying = timeEach(signed, (xml) => verifyAgreementSignatures(xml, { validateChain, at: now }));
  const countersigning = timeEach(signed, (xml) => countersign(xml, initiator.privateKey, [initiator.certificate]));
  const verifyingBoth = timeEach(countersigning.results, (xml) =>
    verifyAgreementSignatures(xml, { validateChain, at: now }),
  );

  // The parts alone, on the same signed documents (parsing is outside the timed calls).
  const c14nTimes: number[] = [];
  const signTimes: number[] = [];
  const verifyTimes: number[] = [];
  const chainTimes: number[] = [];
  for (const xml of signed) {
    withSignature(xml, (doc, signature, signedInfo) => {
      let t0 = performance.now();
      referenceDigest(doc, signature);
      const data = canonicalSignedInfo(signedInfo);
      c14nTimes.push(performance.now() - t0);
      t0 = performance.now();
      const value = signBytes(method, provider.privateKey, data);
      signTimes.push(performance.now() - t0);
      t0 = performance.now();
      verifyBytes(method, provider.certificate.publicKey, data, value);
      verifyTimes.push(performance.now() - t0);
    });
    const t0 = performance.now();
    validateChain([provider.certificate], now);
    chainTimes.push(performance.now() - t0);
  }
  const c14n = `C14N ${median(c14nTimes).toFixed(2)}`;
  row(`sign (${keyName})`, signing.times, `${c14n}, ${keyName} sign ${median(signTimes).toFixed(2)}`);
  row(
    `verify provider signature (${keyName})`,
    verifying.times,
    `${c14n}, ${keyName} verify ${median(verifyTimes).toFixed(2)}, chain ${median(chainTimes).toFixed(2)}`,
  );
  row(`countersign (${keyName})`, countersigning.times, `${c14n}, ${keyName} sign ${median(signTimes).toFixed(2)}`);
  row(`verify both signatures (${keyName})`, verifyingBoth.times, `2 × (C14N, ${keyName} verify, chain)`);
}

const size = (xml: string) => `${(Buffer.byteLength(xml) / 1024).toFixed(1)} KB`;
const table = [
  machineHeading('agreement signatures'),
  '',
  `Command: \`npm run bench:signatures\` (${rounds} agreements of ${size(agreements[0] as string)}, one process, sequential). ` +
    'The last column gives medians of the parts timed alone on the same documents: exclusive C14N of the document and SignedInfo, the RSA/ECDSA operation, TrustStore.validate.',
  '',
  '| operation | agreements | median ms | p99 ms | parts (median ms) |',
  '|---|---|---|---|---|',
  ...rows,
  '',
].join('\n');
publish(table);
