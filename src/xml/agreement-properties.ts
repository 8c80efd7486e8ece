import type { Agreement } from '../domain/agreement.js';
import { escapeXml } from './escape.js';
import { c14n, elementChildren } from './item-constraint.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';

/** The resource properties of an agreement (WS-Agreement sections 6 and 7), each as XML elements. */
export interface AgreementPropertiesXml {
  Name: string[];
  AgreementId: string[];
  Context: string[];
  Terms: string[];
  AgreementState: string[];
  ServiceTermState: string[];
  GuaranteeTermState: string[];
}

const wsagNs = `xmlns:wsag="${ns.wsag}"`;

export function agreementProperties(agreement: Agreement): AgreementPropertiesXml {
  const fromDocument = withXml(agreement.document, 'stored agreement', (doc) => {
    const parts: Record<string, string> = {};
    for (const child of elementChildren(doc.root)) parts[child.name] = c14n(child);
    return parts;
  });
  return {
    Name: fromDocument.Name ? [fromDocument.Name] : [],
    AgreementId: [`<wsag:AgreementId ${wsagNs}>${escapeXml(agreement.id)}</wsag:AgreementId>`],
    Context: fromDocument.Context ? [fromDocument.Context] : [],
    Terms: fromDocument.Terms ? [fromDocument.Terms] : [],
    AgreementState: [
      `<wsag:AgreementState ${wsagNs}><wsag:State>${agreement.state}</wsag:State></wsag:AgreementState>`,
    ],
    ServiceTermState: agreement.serviceTerms.map(
      (t) =>
        // Sub-states (Processing, Idle) need run-time content; the runtime issue adds them.
        `<wsag:ServiceTermState ${wsagNs} wsag:termName="${escapeXml(t.termName)}"><wsag:State>${t.state}` +
        `</wsag:State></wsag:ServiceTermState>`,
    ),
    GuaranteeTermState: agreement.guaranteeTerms.map(
      (t) =>
        `<wsag:GuaranteeTermState ${wsagNs} wsag:termName="${escapeXml(t.termName)}"><wsag:State>${t.state}` +
        `</wsag:State></wsag:GuaranteeTermState>`,
    ),
  };
}

/** wsag:AgreementProperties or wsag:AgreementStateProperties: the whole resource property document. */
export function agreementPropertiesDocument(
  agreement: Agreement,
  element: 'AgreementProperties' | 'AgreementStateProperties',
): string {
  const p = agreementProperties(agreement);
  const content = [
    ...p.Name,
    ...p.AgreementId,
    ...p.Context,
    ...p.Terms,
    ...p.AgreementState,
    ...p.GuaranteeTermState,
    ...p.ServiceTermState,
  ];
  return `<wsag:${element} ${wsagNs}>${content.join('')}</wsag:${element}>`;
}
