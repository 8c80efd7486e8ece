/**
 * `npm run bench:documents`: the document thread's work, timed in one process with the
 * thread's own functions (src/workers/document-tasks.ts) on the requests the concurrent bench
 * sends: reading a CreateAgreement offer (parse, schema validation, the domain view, the
 * deadline-job template's creation constraints), reading the Solicited offer of a Negotiate,
 * and signing an agreement with an ECDSA P-256 key. No server, no HTTP, no other thread: the
 * figures change only with this work, so two builds compare closely (the least of several
 * rounds, each the mean of BENCH_DOCUMENTS calls, default 500). Prints a Markdown table;
 * `--write` puts it in docs/benchmarks.md in place of the last.
 */
import fs from 'node:fs';
import path from 'node:path';
import { plainEnvelope } from '../src/client/soap-requests.js';
import { createCa, issueEndEntity } from '../src/crypto/certificate-authority.js';
import { nameFromParts } from '../src/crypto/distinguished-name.js';
import { documentTasks } from '../src/workers/document-tasks.js';
import { XmlAgreementWriter } from '../src/xml/agreement-writer.js';
import { withXml } from '../src/xml/libxml.js';
import { readOffer } from '../src/xml/offer-reader.js';
import { renderTimeTokens, TemplateLibrary } from '../src/xml/template-library.js';
import { createBody, oneNodeJobOfferFrom, solicitedNegotiateInput } from './job-offer.js';
import { machineHeading, publish } from './report.js';

const calls = Number(process.env.BENCH_DOCUMENTS ?? 500);
const rounds = 8;
const now = new Date();

const library = TemplateLibrary.fromDirectory('templates');
const offer = oneNodeJobOfferFrom(
  renderTimeTokens(fs.readFileSync(path.join('templates', 'deadline-job.xml'), 'utf8'), now),
);
const createText = createBody(offer);
const negotiateText = plainEnvelope(solicitedNegotiateInput(offer));

const ca = await createCa({
  subject: nameFromParts([
    ['O', 'bench'],
    ['CN', 'bench CA'],
  ]),
  keyType: 'ec',
  days: 30,
  now,
});
const provider = await issueEndEntity({
  ca,
  subject: nameFromParts([
    ['O', 'bench'],
    ['CN', 'provider.example.org'],
  ]),
  keyType: 'ec',
  days: 30,
  now,
  purpose: 'server',
});
const tasks = documentTasks({ library, credentials: { key: provider.privateKey, chain: [provider.certificate] } });
const agreement = withXml(offer, 'offer', (doc) =>
  new XmlAgreementWriter().write(readOffer(doc.root), {
    agreementId: 'bench-agreement',
    initiator: '/O=bench/CN=broker',
    responder: 'provider.example.org',
    templateId: 'deadline-job-v1',
    templateName: 'deadline-job',
  }),
);

const work: Array<[string, () => unknown]> = [
  ['read a CreateAgreement offer', () => tasks.readAgreementOffer({ text: createText, input: 'CreateAgreementInput' })],
  [
    'read a Negotiate offer (Solicited)',
    () => tasks.readNegotiationOffers({ text: negotiateText, input: 'NegotiateInput' }),
  ],
  ['sign an agreement (ECDSA P-256)', () => tasks.sign(agreement)],
];
for (const [what, run] of work) {
  const answer = run() as { fault?: { message: string } };
  if (answer.fault) throw new Error(`${what}: ${answer.fault.message}`);
}

const rows = work.map(([what, run]) => {
  const means: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) run();
    means.push(((performance.now() - started) * 1000) / calls);
  }
  const measured = means.slice(1).sort((a, b) => a - b); // the first round warms up
  return `| ${what} | ${calls} × ${rounds - 1} | ${(measured[0] as number).toFixed(0)} | ${(measured[Math.floor(measured.length / 2)] as number).toFixed(0)} |`;
});

publish(
  [
    machineHeading('document thread work'),
    '',
    `Command: \`npm run bench:documents\` (one process, the document thread's own functions, the requests of \`npm run bench:concurrent\`; each round the mean of ${calls} calls, the first round a warm-up).`,
    '',
    '| work | calls | least µs | median µs |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
