import fs from 'node:fs';
import path from 'node:path';
import { XmlAgreementWriter } from '../../src/xml/agreement-writer.js';
import { c14n } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { renderTimeTokens } from '../../src/xml/template-library.js';
import { receivedOffer } from '../support/offers.js';

const templatesDir = path.resolve(import.meta.dirname, '../../templates');

/** An agreement document as the server writes it: a shipped template's default offer, accepted. */
export function agreementXml(template = 'deadline-job', agreementId = 'agreement-1'): string {
  const source = withXml(fs.readFileSync(path.join(templatesDir, `${template}.xml`), 'utf8'), 'template', (doc) =>
    c14n(doc.root),
  );
  const offer = receivedOffer(offerFromTemplate(renderTimeTokens(source, new Date('2026-11-21T12:00:00Z'))));
  return new XmlAgreementWriter().write(offer, {
    agreementId,
    initiator: '/O=wsag-server tests/CN=alice',
    responder: 'provider.example.org',
    templateId: `${template}-v1`,
    templateName: template,
  });
}

/** The same document indented, so that whitespace text sits between its elements. */
export function indented(xml: string): string {
  return withXml(xml, 'agreement', (doc) => doc.root.toString({ format: true }));
}
