import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CreationConstraintViolation } from '../../src/domain/errors.js';
import type { AgreementTemplate } from '../../src/domain/template.js';
import { agreementOfferElement, readAgreementOfferInput } from '../../src/soap/agreement-offer-input.js';
import { readEnvelope } from '../../src/soap/envelope.js';
import { withXml } from '../../src/xml/libxml.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import type { XmlReceivedOffer } from '../../src/xml/offer-reader.js';
import { TemplateLibrary, withConstraintsChecked } from '../../src/xml/template-library.js';
import { createAgreementBody, soap11 } from '../support/soap.js';
import { projectRoot } from '../support/server.js';

const library = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));
const template = library.find({ name: 'deadline-job' }) as AgreementTemplate;
const deadlineTemplate = library
  .render(new Date('2026-11-21T12:00:00Z'))
  .find((t) => t.includes('<wsag:Name>deadline-job</wsag:Name>')) as string;

/** The offer's own namespace declarations moved to the envelope (and a default namespace there): everything the offer names is inherited. */
function inheritingEverything(envelope: string): string {
  const start = /<wsag:AgreementOffer\b[^>]*>/.exec(envelope)?.[0] as string;
  const declarations = start.match(/\sxmlns:[\w.-]+="[^"]*"/g) ?? [];
  expect(declarations.length).toBeGreaterThan(2);
  return envelope
    .replace(
      start,
      declarations.reduce((tag, d) => tag.replace(d, ''), start),
    )
    .replace('<soap:Envelope ', `<soap:Envelope xmlns="urn:example:default"${declarations.join('')} `);
}

/** The offer read from the envelope, its constraints checked on its element (moved out of the envelope) and, independently, on its standalone copy parsed again. */
function verdicts(envelope: string): { inPlace: string | null | undefined; parsedAgain: string | null } {
  return withXml(envelope, 'SOAP message', (doc) => {
    const body = readEnvelope(doc).body;
    const offer: XmlReceivedOffer = readAgreementOfferInput(body, 'CreateAgreementInput');
    let parsedAgain: string | null = null;
    try {
      library.checkCreationConstraints(template, offer);
    } catch (error) {
      expect(error).toBeInstanceOf(CreationConstraintViolation);
      parsedAgain = (error as CreationConstraintViolation).technicalDetail ?? (error as Error).message;
    }
    const inPlace = withConstraintsChecked(library, offer, agreementOfferElement(body)).checkedVerdict(template.id);
    return { inPlace, parsedAgain };
  });
}

describe('creation constraints checked on the offer as parsed with its envelope', () => {
  it('reach the verdicts a parse of its standalone copy reaches, whichever element declares the namespaces', () => {
    for (const nodes of ['3', '64', '65', '100']) {
      const envelope = soap11(
        createAgreementBody(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: nodes }])),
      );
      for (const variant of [envelope, inheritingEverything(envelope)]) {
        const { inPlace, parsedAgain } = verdicts(variant);
        expect(inPlace, `${nodes} nodes`).toBe(parsedAgain);
        if (nodes === '3' || nodes === '64') expect(inPlace).toBeNull();
        else expect(inPlace).toMatch(/^Item 'NodeCount' at /);
      }
    }
  });

  it('fall back to the standalone copy where the envelope declares the xml: prefix itself, with the same verdict', () => {
    const envelope = soap11(
      createAgreementBody(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: '100' }])),
    ).replace('<soap:Envelope ', '<soap:Envelope xmlns:xml="http://www.w3.org/XML/1998/namespace" ');
    const { inPlace, parsedAgain } = verdicts(envelope);
    expect(inPlace).toMatch(/^Item 'NodeCount' at /);
    expect(inPlace).toBe(parsedAgain);
  });

  it('fall back to the standalone copy where an ancestor carries xml:lang, with the same verdict', () => {
    const envelope = soap11(
      createAgreementBody(offerFromTemplate(deadlineTemplate, [{ location: 'NodeCount', value: '100' }])),
    ).replace('<soap:Body>', '<soap:Body xml:lang="en">');
    const { inPlace, parsedAgain } = verdicts(envelope);
    expect(inPlace).toMatch(/^Item 'NodeCount' at /);
    expect(inPlace).toBe(parsedAgain);
  });
});
