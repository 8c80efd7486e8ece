/**
 * Shared inputs of the src/xml tests: the shipped templates served at a fixed time, offers
 * made from them, and schema checks (ours with libxml2-wasm, the reference with xmllint).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WsagError } from '../../src/domain/errors.js';
import type { ReceivedOffer } from '../../src/engine/ports.js';
import { canonicalOfSource } from '../../src/xml/canonical.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { offerFromTemplate, type OfferSetting } from '../../src/xml/offer-from-template.js';
import { readOffer, type XmlReceivedOffer } from '../../src/xml/offer-reader.js';
import { SchemaSet } from '../../src/xml/schema-set.js';
import { TemplateLibrary, renderTimeTokens } from '../../src/xml/template-library.js';
import { validateAllWithReference } from '../schemas/helpers.js';

const projectRoot = path.resolve(import.meta.dirname, '../..');

/** Templates are served at this instant: deadline-job is due 2026-11-21T18:00:00Z, the reservation runs 14:00-16:00. */
export const servedAt = new Date('2026-11-21T12:00:00Z');
export const library = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));

export type TemplateName = 'deadline-job' | 'advance-reservation';

export function renderedTemplate(name: TemplateName): string {
  return renderTimeTokens(fs.readFileSync(path.join(projectRoot, 'templates', `${name}.xml`), 'utf8'), servedAt);
}

export function offerXml(name: TemplateName, settings: OfferSetting[] = []): string {
  return offerFromTemplate(renderedTemplate(name), settings);
}

export function read(xml: string): XmlReceivedOffer {
  return withXml(xml, 'offer', (doc) => readOffer(doc.root));
}

/** The offer's wsag:AgreementOffer and wsag:Terms in canonical form, as assertions compare them. */
export const canonicalOffer = (offer: XmlReceivedOffer): string => canonicalOfSource(offer.offerSource);
export const canonicalTerms = (offer: XmlReceivedOffer): string => canonicalOfSource(offer.termsSource);

/** The CreationConstraintViolation message, or undefined when the offer meets the template. */
export function constraintProblem(name: TemplateName, offer: ReceivedOffer): string | undefined {
  const template = library.find({ name });
  if (!template) throw new Error(`no template ${name}`);
  try {
    library.checkCreationConstraints(template, offer);
    return undefined;
  } catch (error) {
    // The verdict as checked (the fault's detail); its message says the same in plain words.
    if (error instanceof WsagError) return error.technicalDetail ?? error.message;
    throw error;
  }
}

/** Our schemas/all.xsd as the server applies it: the SchemaViolation message, or undefined. */
export function ourSchemaProblem(xml: string): string | undefined {
  try {
    withXml(xml, 'document', (doc) => SchemaSet.get().validate(doc, 'document'));
    return undefined;
  } catch (error) {
    if (error instanceof WsagError) return error.message;
    throw error;
  }
}

/** The reference WS-Agreement schemas with xmllint: the errors per failing document ({} when all validate). */
export function referenceProblems(documents: Record<string, string>): Record<string, string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-xml-'));
  try {
    const files = Object.entries(documents).map(([label, xml]) => {
      const file = path.join(dir, `${label.replace(/[^\w.-]/g, '_')}.xml`);
      fs.writeFileSync(file, xml);
      return [label, file] as const;
    });
    const verdicts = validateAllWithReference(files.map(([, file]) => file));
    const problems: Record<string, string[]> = {};
    for (const [label, file] of files) {
      const verdict = verdicts.get(file);
      if (!verdict?.valid) problems[label] = verdict?.errors ?? ['no verdict'];
    }
    return problems;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The error a function throws (for asserting class and message together). */
export function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

/** Wraps Name, Context and Terms of an AgreementOffer into an initiator's wsag-neg:NegotiationOffer. */
export function negotiationOffer(
  agreementOffer: string,
  options: {
    offerId?: string;
    counterOfferTo?: string;
    state?: string;
    expirationTime?: string;
    creator?: string;
  } = {},
): string {
  const inner = agreementOffer.replace(/^<wsag:AgreementOffer([^>]*)>/, '').replace(/<\/wsag:AgreementOffer>$/, '');
  const declarations = /^<wsag:AgreementOffer([^>]*)>/.exec(agreementOffer)?.[1] ?? '';
  const offerId = options.offerId === undefined ? '' : ` wsag-neg:OfferId="${options.offerId}"`;
  const counterOfferTo =
    options.counterOfferTo === undefined
      ? ''
      : `<wsag-neg:CounterOfferTo>${options.counterOfferTo}</wsag-neg:CounterOfferTo>`;
  const expires = options.expirationTime
    ? `<wsag-neg:ExpirationTime>${options.expirationTime}</wsag-neg:ExpirationTime>`
    : '';
  const state = options.state ?? 'Solicited';
  return (
    `<wsag-neg:NegotiationOffer xmlns:wsag-neg="${ns.wsagNeg}"${declarations}${offerId}>${inner}` +
    `<wsag-neg:NegotiationOfferContext>${counterOfferTo}${expires}` +
    `<wsag-neg:Creator>${options.creator ?? 'NegotiationInitiator'}</wsag-neg:Creator>` +
    `<wsag-neg:State>${state ? `<wsag-neg:${state}></wsag-neg:${state}>` : ''}</wsag-neg:State></wsag-neg:NegotiationOfferContext>` +
    '<wsag-neg:NegotiationConstraints></wsag-neg:NegotiationConstraints></wsag-neg:NegotiationOffer>'
  );
}
