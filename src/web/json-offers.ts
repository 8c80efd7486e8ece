import type { Agreement } from '../domain/agreement.js';
import { CreationConstraintViolation, MalformedMessage } from '../domain/errors.js';
import { didYouMean } from '../domain/suggest.js';
import { paths } from '../soap/agreement-ports.js';
import { readAgreementOfferInput } from '../soap/agreement-offer-input.js';
import { checkedSettings, settable, TemplateValueError, valuesInWords } from '../xml/item-values.js';
import { withXml } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { offerFromTemplate } from '../xml/offer-from-template.js';
import type { TemplateLibrary } from '../xml/template-library.js';
import { summarizeTemplate, type TemplateSummary } from '../xml/template-summary.js';
import { agreementSummary } from './summaries.js';

/**
 * What the JSON face's creates and negotiation offers share: an offer described as a
 * template and item values (the CLI's `--set`) or sent as a document, made into the
 * wsag:AgreementOffer the SOAP ports would have received, and agreements as answered.
 */
export interface OfferRequest {
  template?: string;
  items?: Record<string, string | number | boolean>;
  offer?: string;
}

/** The templates as served now. */
export function servedTemplates(templates: TemplateLibrary, now: Date): TemplateSummary[] {
  return templates.render(now).map(summarizeTemplate);
}

/**
 * The template whose Name, else TemplateId, is `ref`, as served now; only that one is rendered and read. `unknown`
 * makes the refusal (its message names the others).
 */
export function servedTemplate(
  templates: TemplateLibrary,
  ref: string,
  now: Date,
  unknown: (message: string) => Error,
): TemplateSummary {
  const all = templates.list();
  const found = all.find((t) => t.name === ref) ?? all.find((t) => t.id === ref);
  if (found) return summarizeTemplate(templates.renderOne(found, now));
  throw unknown(
    `no template "${ref}"${didYouMean(
      ref,
      all.map((t) => t.name),
    )}; the server offers: ${all.map((t) => `${t.name} (id ${t.id})`).join(', ') || 'none'}`,
  );
}

/** The offer asked for: the template with the item values set, or the document sent. */
export function offerDocument(request: OfferRequest, template: (ref: string) => TemplateSummary): string {
  if (request.offer !== undefined) {
    if (request.template !== undefined || request.items !== undefined)
      throw new MalformedMessage('give a template with its items, or an offer document, not both');
    return request.offer.replace(/^\s*<\?xml[^>]*\?>/, '');
  }
  if (request.template === undefined)
    throw new MalformedMessage('give "template" (its Name or TemplateId, with "items") or "offer" (a document)');
  const chosen = template(request.template);
  const settings = Object.entries(request.items ?? {}).map(([location, value]) => ({ location, value: String(value) }));
  try {
    return offerFromTemplate(chosen.xml, checkedSettings(chosen, settings, 'item '));
  } catch (error) {
    if (error instanceof TemplateValueError) throw new CreationConstraintViolation(error.message);
    throw error;
  }
}

/** An offer document read as CreateAgreement reads its Body's: checked against the same schemas. */
export function readOfferDocument(offerXml: string) {
  return withXml(
    `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${offerXml}</wsag:CreateAgreementInput>`,
    'the offer',
    (doc) => readAgreementOfferInput(doc.root, 'CreateAgreementInput'),
  );
}

export function templateView(t: TemplateSummary) {
  const self = `/api/templates/${encodeURIComponent(t.id)}`;
  return {
    id: t.id,
    name: t.name,
    items: t.items.map((item) => ({
      name: item.name,
      ...(item.value !== undefined ? { value: item.value } : {}),
      settable: settable(item),
      takes: settable(item) ? valuesInWords(item) : 'set by no value (it shapes the offer)',
      constraint: item.constraint,
    })),
    ...(t.window ? { window: t.window } : {}),
    links: { self, document: `${self}/document` },
  };
}

/** An agreement as the JSON face answers it: its summary and where to read it, its signed document and its EPR. */
export function agreementView(agreement: Agreement, baseUrl: string) {
  const summary = agreementSummary(agreement);
  return { ...summary, links: { ...summary.links, epr: `${baseUrl}${paths.Agreement}` } };
}
