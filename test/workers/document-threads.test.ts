import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAgreementSignatures, type ValidateChain } from '../../src/crypto/xml-signature.js';
import { CreationConstraintViolation, InvalidTerms, SchemaViolation, type WsagError } from '../../src/domain/errors.js';
import type { AgreementTemplate } from '../../src/domain/template.js';
import type { AgreementOfferInput } from '../../src/soap/agreement-offer-input.js';
import { readEnvelope, type SoapRequest } from '../../src/soap/envelope.js';
import type { NegotiationOfferInput } from '../../src/soap/negotiation-offer-input.js';
import { THREAD_LOADED } from '../../src/workers/document-tasks.js';
import {
  DOCUMENT_THREAD_YOUNG_GENERATION_MIB,
  DocumentThreads,
  type DocumentWorkDone,
} from '../../src/workers/document-threads.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { canonicalOfSource } from '../../src/xml/canonical.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import type { XmlNegotiationOffer } from '../../src/xml/negotiation-reader.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { offerWithTerms } from '../../src/xml/offer-slot.js';
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
function read(
  threads: DocumentThreads,
  envelope: string,
  input: AgreementOfferInput = 'CreateAgreementInput',
): Promise<XmlReceivedOffer> {
  return withXml(envelope, 'SOAP message', (doc) => {
    const request: SoapRequest = { ...readEnvelope(doc), text: envelope };
    return threads.readAgreementOffer(request, input);
  });
}
/** The fault a reading ends with (the test fails if it reads). */
const refusal = (reading: Promise<unknown>) =>
  reading.then(
    () => {
      throw new Error('the offer was read');
    },
    (error: unknown) => error as WsagError,
  );
/** Each bad envelope refused on the calling thread and on a thread alike: the fault's class and message. */
async function expectSameFaults(
  bad: Array<[string, typeof SchemaViolation | typeof InvalidTerms]>,
  here: (envelope: string) => Promise<unknown>,
  there: (envelope: string) => Promise<unknown>,
): Promise<void> {
  for (const [envelope, kind] of bad) {
    const faultHere = await refusal(here(envelope));
    const faultThere = await refusal(there(envelope));
    expect(faultHere).toBeInstanceOf(kind);
    expect(faultThere).toBeInstanceOf(kind);
    expect(faultThere.message).toBe(faultHere.message);
  }
}
/** What an offer read says, without the parts only a class carries. */
const view = (offer: XmlReceivedOffer) => ({
  ...offer.toParts(),
  offerXml: canonicalOfSource(offer.offerSource),
  alternatives: offer.alternatives().length,
});

describe.runIf(available)('DocumentThreads: signing', () => {
  // 40 on one thread: more than the tasks that wait on a thread and in the pool's queue, so some are signed here.
  for (const [threads, count] of [
    [0, 12],
    [2, 12],
    [1, 40],
  ] as const) {
    it(`with ${threads} worker threads: ${count} agreements signed at once each verify as the provider's, on their own document`, async () => {
      const documents = DocumentThreads.start(threads, { credentials: credentials() });
      try {
        expect(documents.threads).toBe(threads);
        const inputs = Array.from({ length: count }, (_, i) => agreementXml('deadline-job', `agreement-${i}`));
        const signed = await Promise.all(inputs.map((d) => documents.signer?.sign(d) as Promise<string>));
        signed.forEach((xml, i) => {
          expect(xml).toMatch(new RegExp(`agreement-${i}(?!\\d)`));
          expect(verifyAgreementSignatures(xml, { validateChain, at: new Date() }).provider.identity).toContain(
            'CN=provider.example.org',
          );
        });
      } finally {
        await documents.close();
      }
      expect(documents.threads).toBe(0);
    });
  }

  it('compiled (dist/, as npm start runs it), signs and reads offers on its thread with the compiled worker', async () => {
    // `npm test` builds dist/ before the tests run.
    const compiled = (await import(
      new URL('../../dist/workers/document-threads.js', import.meta.url).href
    )) as typeof import('../../src/workers/document-threads.js');
    const documents = compiled.DocumentThreads.start(1, { credentials: credentials() });
    try {
      expect(documents.threads).toBe(1);
      const signed = await (documents.signer?.sign(agreementXml()) as Promise<string>);
      expect(verifyAgreementSignatures(signed, { validateChain, at: new Date() }).provider.identity).toContain(
        'CN=provider.example.org',
      );
      const offer = await read(documents, soap11(createAgreementBody(offerFromTemplate(deadlineTemplate))));
      expect(offer.templateId).toBe('deadline-job-v1');
    } finally {
      await documents.close();
    }
  });

  it('refuses, as signing on the loop does, a document that is already signed', async () => {
    const documents = DocumentThreads.start(1, { credentials: credentials() });
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
    const documents = DocumentThreads.start(1, { credentials: credentials(), busy: () => others });
    try {
      const envelope = soap11(createAgreementBody(offerFromTemplate(deadlineTemplate)));
      const check = async (i: number) => {
        expect((await read(documents, envelope)).name).toBe('deadline-job');
        const signed = await (documents.signer?.sign(
          agreementXml('deadline-job', `agreement-${i}`),
        ) as Promise<string>);
        expect(verifyAgreementSignatures(signed, { validateChain, at: new Date() }).provider.identity).toContain(
          'CN=provider.example.org',
        );
      };
      expect(documents.handsWorkOver).toBe(false);
      await check(1);
      expect(documents.tasksDoneOnThreads).toBe(0);
      others = true;
      expect(documents.handsWorkOver).toBe(true);
      await check(2);
      expect(documents.tasksDoneOnThreads).toBe(2);
      others = false;
      await check(3);
      expect(documents.tasksDoneOnThreads).toBe(2);
    } finally {
      await documents.close();
    }
  });

  it('keeps work on the calling thread while the threads are behind: 16 tasks at the thread and 8 in the queue', async () => {
    const observed: DocumentWorkDone[] = [];
    const documents = DocumentThreads.start(1, {
      credentials: credentials(),
      busy: () => true,
      observe: (done) => observed.push(done),
    });
    try {
      await documents.signer?.sign(agreementXml()); // the thread is up
      const inputs = Array.from({ length: 40 }, (_, i) => agreementXml('deadline-job', `agreement-${i}`));
      const signed = await Promise.all(inputs.map((d) => documents.signer?.sign(d) as Promise<string>));
      expect(documents.tasksDoneOnThreads).toBe(1 + 16 + 8);
      // Each signing is observed where it ran, with its time from asking to the answer.
      const where = (on: DocumentWorkDone['on']) => observed.filter((done) => done.on === on);
      expect([where('thread').length, where('event-loop').length]).toEqual([1 + 16 + 8, 40 - 16 - 8]);
      expect(observed.every((done) => done.work === 'sign' && done.seconds > 0)).toBe(true);
      // The last of the 24 at the thread waited behind the others: longer than any signing kept here.
      expect(Math.max(...where('thread').map((done) => done.seconds))).toBeGreaterThan(
        Math.max(...where('event-loop').map((done) => done.seconds)),
      );
      signed.forEach((xml, i) => {
        expect(xml).toMatch(new RegExp(`agreement-${i}(?!\\d)`));
        expect(verifyAgreementSignatures(xml, { validateChain, at: new Date() }).provider.identity).toContain(
          'CN=provider.example.org',
        );
      });
      // Once the threads have caught up, work goes to them again.
      await documents.signer?.sign(agreementXml());
      expect(documents.tasksDoneOnThreads).toBe(1 + 16 + 8 + 1);
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
    const observed: DocumentWorkDone[] = [];
    const documents = DocumentThreads.start(1, { observe: (done) => observed.push(done) });
    try {
      expect(documents.signer).toBeUndefined();
      expect((await read(documents, soap11(createAgreementBody(offerFromTemplate(deadlineTemplate))))).name).toBe(
        'deadline-job',
      );
      expect(observed.map(({ work, on }) => ({ work, on }))).toEqual([{ work: 'read-offer', on: 'thread' }]);
    } finally {
      await documents.close();
    }
  });

  it('starts each thread with a young generation of 4 MiB semi-spaces, whatever the event loop runs with', async () => {
    const documents = DocumentThreads.start(2);
    try {
      expect(documents.workers).toHaveLength(2);
      // V8 makes a young generation three semi-spaces.
      expect(DOCUMENT_THREAD_YOUNG_GENERATION_MIB).toBe(3 * 4);
      for (const worker of documents.workers)
        expect(worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(DOCUMENT_THREAD_YOUNG_GENERATION_MIB);
    } finally {
      await documents.close();
    }
  });

  it('closed right after it started, ends its threads only once they have loaded their tasks (Node 20 aborts on a thread ended mid-load)', async () => {
    const documents = DocumentThreads.start(2);
    const loaded: unknown[] = [];
    for (const worker of documents.workers)
      worker.on('message', (message) => {
        if (message === THREAD_LOADED) loaded.push(message);
      });
    await documents.close();
    expect(loaded).toHaveLength(2);
  });

  it('reads an offer even when telling of it fails (a metric that throws fails nothing)', async () => {
    const documents = DocumentThreads.start(0, {
      observe: () => {
        throw new Error('the metric failed');
      },
    });
    const offer = await read(documents, soap11(createAgreementBody(offerFromTemplate(deadlineTemplate))));
    expect(offer.name).toBe('deadline-job');
    await new Promise((resolve) => setImmediate(resolve)); // an unhandled rejection would surface here and fail the run
  });

  it('reads on a thread the very offer the calling thread reads, and raises the same faults by class and message', async () => {
    const here = DocumentThreads.start(0);
    const there = DocumentThreads.start(1);
    try {
      const good = soap11(
        createAgreementBody(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: '3' }])),
      );
      const offerHere = await read(here, good);
      const offerThere = await read(there, good);
      expect(offerThere.request.nodeCount).toBe(3);
      expect(view(offerThere)).toEqual(view(offerHere));
      expect(offerThere.expiresAt).toEqual(offerHere.expiresAt);

      const pending = good.replace(/CreateAgreementInput/g, 'CreatePendingAgreementInput');
      expect(view(await read(there, pending, 'CreatePendingAgreementInput'))).toEqual(
        view(await read(here, pending, 'CreatePendingAgreementInput')),
      );

      const bad: Array<[string, typeof SchemaViolation | typeof InvalidTerms]> = [
        [good.replace('<wsag:Terms', '<wsag:Bogus/><wsag:Terms'), SchemaViolation],
        [
          good.replace(/<sla:Deadline>[^<]*<\/sla:Deadline>/, '<sla:Deadline>2026-02-30T12:00:00Z</sla:Deadline>'),
          SchemaViolation,
        ],
        [good.replace(/<jsdl:Exact>3<\/jsdl:Exact>/, '<jsdl:Exact>0</jsdl:Exact>'), InvalidTerms],
      ];
      await expectSameFaults(
        bad,
        (envelope) => read(here, envelope),
        (envelope) => read(there, envelope),
      );
    } finally {
      await here.close();
      await there.close();
    }
  });
});

describe('DocumentThreads: reading negotiation offers', () => {
  /** Reads the offers of a Negotiate (or Advertise) envelope through `threads`, as the SOAP port does. */
  function readOffers(
    threads: DocumentThreads,
    envelope: string,
    input: NegotiationOfferInput = 'NegotiateInput',
  ): Promise<XmlNegotiationOffer[]> {
    return withXml(envelope, 'SOAP message', (doc) =>
      threads.readNegotiationOffers({ ...readEnvelope(doc), text: envelope }, input),
    );
  }
  const offerOf = (nodes: string, offerId: string) =>
    negotiationOffer(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: nodes }]), {
      offerId,
      counterOfferTo: 'deadline-job-v1',
      state: 'Solicited',
    });
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
      expect(offersThere.map((o) => [o.offerId, o.offer.request.nodeCount, o.state])).toEqual([
        ['o-1', 2, 'Solicited'],
        ['o-2', 5, 'Solicited'],
      ]);
      expect(offersThere[0]?.offer).toBeInstanceOf(XmlReceivedOffer);
      expect(offersThere.map(offerView)).toEqual((await readOffers(here, good)).map(offerView));

      const advertised = negotiateEnvelope([offerOf('3', 'a-1')], 'AdvertiseInput');
      expect((await readOffers(there, advertised, 'AdvertiseInput')).map(offerView)).toEqual(
        (await readOffers(here, advertised, 'AdvertiseInput')).map(offerView),
      );

      const bad: Array<[string, typeof SchemaViolation | typeof InvalidTerms]> = [
        [negotiateEnvelope(Array.from({ length: 17 }, (_, i) => offerOf('1', `o-${i}`))), InvalidTerms],
        [good.replace('<wsag:Terms', '<wsag:Bogus/><wsag:Terms'), SchemaViolation],
        [good.replace(/<jsdl:Exact>5<\/jsdl:Exact>/, '<jsdl:Exact>0</jsdl:Exact>'), InvalidTerms],
      ];
      await expectSameFaults(
        bad,
        (envelope) => readOffers(here, envelope),
        (envelope) => readOffers(there, envelope),
      );
    } finally {
      await here.close();
      await there.close();
    }
  });
});

describe('DocumentThreads: creation constraints checked on the thread', () => {
  const library = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));
  const template = library.find({ name: 'deadline-job' }) as AgreementTemplate;
  const envelopeWith = (nodes: string, choice = false) => {
    const offer = offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: nodes }]);
    if (!choice) return soap11(createAgreementBody(offer));
    // Two alternatives: the Job term as asked, and the same with 100 nodes (the template allows 1 to 64).
    const job = /<wsag:ServiceDescriptionTerm wsag:Name="Job".*?<\/wsag:ServiceDescriptionTerm>/s.exec(
      offer,
    )?.[0] as string;
    return soap11(
      createAgreementBody(
        offer.replace(
          job,
          `<wsag:ExactlyOne>${job}${job.replace(/(<jsdl:TotalResourceCount><jsdl:Exact>)\d+/, '$1100')}</wsag:ExactlyOne>`,
        ),
      ),
    );
  };
  /** Each alternative's verdict as the calling thread reaches it: null when met, else the violation as checked (the fault's detail). */
  const verdictsHere = (offer: XmlReceivedOffer) =>
    offer.alternatives().map((alternative) => {
      try {
        library.checkCreationConstraints(template, alternative.withChecked({ templateId: 'none', verdicts: [] }));
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(CreationConstraintViolation);
        return (error as CreationConstraintViolation).technicalDetail ?? (error as Error).message;
      }
    });

  it('reaches the verdicts the calling thread reaches, for each alternative, and hands them over', async () => {
    const here = DocumentThreads.start(0);
    const there = DocumentThreads.start(1, { templates: library.sources() });
    try {
      for (const [envelope, expected] of [
        [envelopeWith('3'), [true]],
        [envelopeWith('100'), [false]],
        [envelopeWith('3', true), [true, false]],
      ] as const) {
        const offerThere = await read(there, envelope);
        const verdictsThere = offerThere.alternatives().map((alternative) => alternative.checkedVerdict(template.id));
        expect(verdictsThere.map((v) => v === null)).toEqual(expected);
        expect(verdictsThere).toEqual(verdictsHere(await read(here, envelope)));
        expect(view(offerThere)).toEqual({
          ...view(await read(here, envelope)),
          checked: offerThere.toParts().checked,
        });
      }
      expect((await read(there, envelopeWith('100'))).checkedVerdict(template.id)).toMatch(
        /^Item 'NodeCount' at .*100/,
      );
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('the library takes a verdict handed over for the template it checks, and checks itself for another', async () => {
    const here = DocumentThreads.start(0);
    try {
      const fits = await read(here, envelopeWith('3'));
      expect(() =>
        library.checkCreationConstraints(
          template,
          fits.withChecked({ templateId: template.id, verdicts: ['planted'] }),
        ),
      ).toThrow(new CreationConstraintViolation('planted'));
      expect(() =>
        library.checkCreationConstraints(
          template,
          fits.withChecked({ templateId: 'another-template', verdicts: ['planted'] }),
        ),
      ).not.toThrow();
      // An offer edited after it was checked (a counter-offer's terms) is checked again: the verdict was about the offer before.
      expect(() =>
        library.checkCreationConstraints(
          template,
          offerWithTerms(fits.withChecked({ templateId: template.id, verdicts: [null] }), { nodeCount: 100 }),
        ),
      ).toThrow(/^Item NodeCount: 100 is more than 64, the most allowed$/);
      const tooMany = await read(here, envelopeWith('100'));
      expect(() =>
        library.checkCreationConstraints(
          template,
          tooMany.withChecked({ templateId: 'another-template', verdicts: [null] }),
        ),
      ).toThrow(CreationConstraintViolation);
    } finally {
      await here.close();
    }
  });
});
