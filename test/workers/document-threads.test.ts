import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAgreementSignatures, type ValidateChain } from '../../src/crypto/xml-signature.js';
import { InvalidTerms, SchemaViolation, type WsagError } from '../../src/domain/errors.js';
import type { AgreementOfferInput } from '../../src/soap/agreement-offer-input.js';
import { readEnvelope, type SoapRequest } from '../../src/soap/envelope.js';
import type { NegotiationOfferInput } from '../../src/soap/negotiation-offer-input.js';
import { DocumentThreads } from '../../src/workers/document-threads.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { canonicalOfSource } from '../../src/xml/canonical.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import type { XmlNegotiationOffer } from '../../src/xml/negotiation-reader.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { XmlReceivedOffer } from '../../src/xml/offer-reader.js';
import { TemplateLibrary } from '../../src/xml/template-library.js';
import { agreementXml } from '../crypto/xml-signature-fixtures.js';
import { createTestPki, trustingTestCa, type TestPki } from '../crypto/xml-signature-pki.js';
import { createAgreementBody, soap11 } from '../support/soap.js';
import { projectRoot } from '../support/server.js';
import { requireTool } from '../support/tools.js';

/** The test PKI is made with the openssl CLI. */
const available = requireTool('openssl');
let pki: TestPki;
let validateChain: ValidateChain;
beforeAll(() => {
  if (!available) return;
  pki = createTestPki();
  validateChain = trustingTestCa(pki);
});
afterAll(() => pki?.remove());

const credentials = () => ({ key: pki.provider.key, chain: pki.provider.chain });
const deadlineTemplate = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'))
  .render(new Date('2026-11-21T12:00:00Z'))
  .find((t) => t.includes('<wsag:Name>deadline-job</wsag:Name>')) as string;

/** Reads the offer of a CreateAgreement envelope through `threads`, as the SOAP port does: the envelope parsed here, its text handed over. */
function read(threads: DocumentThreads, envelope: string, input: AgreementOfferInput = 'CreateAgreementInput'): Promise<XmlReceivedOffer> {
  return withXml(envelope, 'SOAP message', (doc) => {
    const request: SoapRequest = { ...readEnvelope(doc), text: envelope };
    return threads.readAgreementOffer(request, input);
  });
}
/** The fault a reading ends with (the test fails if it reads). */
const refusal = (reading: Promise<unknown>) => reading.then(() => { throw new Error('the offer was read'); }, (error: unknown) => error as WsagError);
/** Each bad envelope refused on the calling thread and on a thread alike: the fault's class and message. */
async function expectSameFaults(bad: Array<[string, typeof SchemaViolation | typeof InvalidTerms]>, here: (envelope: string) => Promise<unknown>, there: (envelope: string) => Promise<unknown>): Promise<void> {
  for (const [envelope, kind] of bad) {
    const faultHere = await refusal(here(envelope));
    const faultThere = await refusal(there(envelope));
    expect(faultHere).toBeInstanceOf(kind);
    expect(faultThere).toBeInstanceOf(kind);
    expect(faultThere.message).toBe(faultHere.message);
  }
}
/** What an offer read says, without the parts only a class carries. */
const view = (offer: XmlReceivedOffer) => ({ ...offer.toParts(), offerXml: canonicalOfSource(offer.offerSource), alternatives: offer.alternatives().length });

describe.runIf(available)('DocumentThreads: signing', () => {
  // 40 on one thread: more than the tasks that wait on a thread, so some wait in the pool's queue.
  for (const [threads, count] of [[0, 12], [2, 12], [1, 40]] as const) {
    it(`with ${threads} worker threads: ${count} agreements signed at once each verify as the provider's, on their own document`, async () => {
      const documents = DocumentThreads.start(threads, credentials());
      try {
        expect(documents.threads).toBe(threads);
        const inputs = Array.from({ length: count }, (_, i) => agreementXml('deadline-job', `agreement-${i}`));
        const signed = await Promise.all(inputs.map((d) => documents.signer?.sign(d) as Promise<string>));
        signed.forEach((xml, i) => {
          expect(xml).toMatch(new RegExp(`agreement-${i}(?!\\d)`));
          expect(verifyAgreementSignatures(xml, { validateChain, at: new Date() }).provider.identity).toContain('CN=provider.example.org');
        });
      } finally {
        await documents.close();
      }
      expect(documents.threads).toBe(0);
    });
  }

  it('compiled (dist/, as npm start runs it), signs and reads offers on its thread with the compiled worker', async () => {
    // `npm test` builds dist/ before the tests run.
    const compiled = (await import(new URL('../../dist/workers/document-threads.js', import.meta.url).href)) as typeof import('../../src/workers/document-threads.js');
    const documents = compiled.DocumentThreads.start(1, credentials());
    try {
      expect(documents.threads).toBe(1);
      const signed = await (documents.signer?.sign(agreementXml()) as Promise<string>);
      expect(verifyAgreementSignatures(signed, { validateChain, at: new Date() }).provider.identity).toContain('CN=provider.example.org');
      const offer = await read(documents, soap11(createAgreementBody(offerFromTemplate(deadlineTemplate))));
      expect(offer.templateId).toBe('deadline-job-v1');
    } finally {
      await documents.close();
    }
  });

  it('refuses, as signing on the loop does, a document that is already signed', async () => {
    const documents = DocumentThreads.start(1, credentials());
    try {
      const signed = await (documents.signer?.sign(agreementXml()) as Promise<string>);
      await expect(documents.signer?.sign(signed)).rejects.toThrow('already signed');
    } finally {
      await documents.close();
    }
  });
});

describe.runIf(available)('DocumentThreads: only while other requests are in progress', () => {
  it('keeps a request that is alone on the calling thread, and hands work over once others come', async () => {
    let others = false;
    const documents = DocumentThreads.start(1, credentials(), () => others);
    try {
      const envelope = soap11(createAgreementBody(offerFromTemplate(deadlineTemplate)));
      const check = async (i: number) => {
        expect((await read(documents, envelope)).name).toBe('deadline-job');
        const signed = await (documents.signer?.sign(agreementXml('deadline-job', `agreement-${i}`)) as Promise<string>);
        expect(verifyAgreementSignatures(signed, { validateChain, at: new Date() }).provider.identity).toContain('CN=provider.example.org');
      };
      await check(1);
      expect(documents.tasksDoneOnThreads).toBe(0);
      others = true;
      await check(2);
      expect(documents.tasksDoneOnThreads).toBe(2);
      others = false;
      await check(3);
      expect(documents.tasksDoneOnThreads).toBe(2);
    } finally {
      await documents.close();
    }
  });
});

describe('DocumentThreads: how many by default', () => {
  it('none on one core, one on two, then two fewer than the cores', () => {
    expect([1, 2, 3, 4, 8].map(DocumentThreads.defaultCount)).toEqual([0, 1, 1, 2, 6]);
  });
});

describe('DocumentThreads: reading offers', () => {
  it('without signing credentials, has no signer and still reads offers on its thread', async () => {
    const documents = DocumentThreads.start(1);
    try {
      expect(documents.signer).toBeUndefined();
      expect((await read(documents, soap11(createAgreementBody(offerFromTemplate(deadlineTemplate))))).name).toBe('deadline-job');
    } finally {
      await documents.close();
    }
  });

  it('reads on a thread the very offer the calling thread reads, and raises the same faults by class and message', async () => {
    const here = DocumentThreads.start(0);
    const there = DocumentThreads.start(1);
    try {
      const good = soap11(createAgreementBody(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: '3' }])));
      const offerHere = await read(here, good);
      const offerThere = await read(there, good);
      expect(offerThere.request.nodeCount).toBe(3);
      expect(view(offerThere)).toEqual(view(offerHere));
      expect(offerThere.expiresAt).toEqual(offerHere.expiresAt);

      const pending = good.replace(/CreateAgreementInput/g, 'CreatePendingAgreementInput');
      expect(view(await read(there, pending, 'CreatePendingAgreementInput'))).toEqual(view(await read(here, pending, 'CreatePendingAgreementInput')));

      const bad: Array<[string, typeof SchemaViolation | typeof InvalidTerms]> = [
        [good.replace('<wsag:Terms', '<wsag:Bogus/><wsag:Terms'), SchemaViolation],
        [good.replace(/<sla:Deadline>[^<]*<\/sla:Deadline>/, '<sla:Deadline>2026-02-30T12:00:00Z</sla:Deadline>'), SchemaViolation],
        [good.replace(/<jsdl:Exact>3<\/jsdl:Exact>/, '<jsdl:Exact>0</jsdl:Exact>'), InvalidTerms],
      ];
      await expectSameFaults(bad, (envelope) => read(here, envelope), (envelope) => read(there, envelope));
    } finally {
      await here.close();
      await there.close();
    }
  });
});

describe('DocumentThreads: reading negotiation offers', () => {
  /** Reads the offers of a Negotiate (or Advertise) envelope through `threads`, as the SOAP port does. */
  function readOffers(threads: DocumentThreads, envelope: string, input: NegotiationOfferInput = 'NegotiateInput'): Promise<XmlNegotiationOffer[]> {
    return withXml(envelope, 'SOAP message', (doc) => threads.readNegotiationOffers({ ...readEnvelope(doc), text: envelope }, input));
  }
  const offerOf = (nodes: string, offerId: string) =>
    negotiationOffer(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: nodes }]), { offerId, counterOfferTo: 'deadline-job-v1', state: 'Solicited' });
  const negotiateEnvelope = (offers: string[], input: NegotiationOfferInput = 'NegotiateInput') =>
    soap11(`<wsag-neg:${input} xmlns:wsag-neg="${ns.wsagNeg}">${offers.join('')}</wsag-neg:${input}>`);
  const offerView = (offer: XmlNegotiationOffer) => ({ ...offer, offer: view(offer.offer as XmlReceivedOffer) });

  it('reads on a thread the very offers the calling thread reads, and raises the same faults by class and message', async () => {
    const here = DocumentThreads.start(0);
    const there = DocumentThreads.start(1);
    try {
      const good = negotiateEnvelope([offerOf('2', 'o-1'), offerOf('5', 'o-2')]);
      const offersThere = await readOffers(there, good);
      expect(there.tasksDoneOnThreads).toBe(1);
      expect(offersThere.map((o) => [o.offerId, o.offer.request.nodeCount, o.state])).toEqual([['o-1', 2, 'Solicited'], ['o-2', 5, 'Solicited']]);
      expect(offersThere[0]?.offer).toBeInstanceOf(XmlReceivedOffer);
      expect(offersThere.map(offerView)).toEqual((await readOffers(here, good)).map(offerView));

      const advertised = negotiateEnvelope([offerOf('3', 'a-1')], 'AdvertiseInput');
      expect((await readOffers(there, advertised, 'AdvertiseInput')).map(offerView)).toEqual((await readOffers(here, advertised, 'AdvertiseInput')).map(offerView));

      const bad: Array<[string, typeof SchemaViolation | typeof InvalidTerms]> = [
        [negotiateEnvelope(Array.from({ length: 17 }, (_, i) => offerOf('1', `o-${i}`))), InvalidTerms],
        [good.replace('<wsag:Terms', '<wsag:Bogus/><wsag:Terms'), SchemaViolation],
        [good.replace(/<jsdl:Exact>5<\/jsdl:Exact>/, '<jsdl:Exact>0</jsdl:Exact>'), InvalidTerms],
      ];
      await expectSameFaults(bad, (envelope) => readOffers(here, envelope), (envelope) => readOffers(there, envelope));
    } finally {
      await here.close();
      await there.close();
    }
  });
});

