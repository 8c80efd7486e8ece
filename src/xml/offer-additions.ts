import type { Application, ChargeAccount } from '../domain/terms.js';
import { escapeXml } from './escape.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';
import { childInOrder, withFragment } from './xml-edit.js';
import { all, one } from './xpath.js';

/**
 * What the CLI adds to an offer made from a template: the job's application (`--run`) and
 * its charge account (`--account`), each at its place in the schema's sequence.
 */

/** jsdl:JobDescription's sequence (JSDL 1.0). */
const jobDescriptionOrder = ['JobIdentification', 'Application', 'Resources', 'DataStaging'];

/**
 * The offer with `application` as its job's jsdl:Application (a jsdl-posix:POSIXApplication),
 * at its place in the job description: what `wsag create --run` sends.
 */
export function withApplication(offerXml: string, application: Application): string {
  return withXml(offerXml, 'offer', (doc) => {
    const descriptions = all(doc.root, './/wsag:ServiceDescriptionTerm//jsdl:JobDescription');
    if (descriptions.length !== 1)
      throw new Error(
        `the offer has ${descriptions.length} jsdl:JobDescription elements: an application goes into exactly one`,
      );
    const description = descriptions[0] as (typeof descriptions)[number];
    if (all(description, 'jsdl:Application').length > 0)
      throw new Error("the offer's job description already has a jsdl:Application");
    return withFragment(
      doc.root,
      childInOrder(description, 'Application', jobDescriptionOrder),
      posixApplication(application),
    );
  });
}

function posixApplication(a: Application): string {
  const element = (name: string, value: string, attributes = '') =>
    `<p:${name}${attributes}>${escapeXml(value)}</p:${name}>`;
  return [
    `<p:POSIXApplication xmlns:p="${ns.jsdlPosix}">`,
    element('Executable', a.executable),
    ...a.arguments.map((value) => element('Argument', value)),
    ...(a.input !== undefined ? [element('Input', a.input)] : []),
    ...(a.output !== undefined ? [element('Output', a.output)] : []),
    ...(a.error !== undefined ? [element('Error', a.error)] : []),
    ...(a.workingDirectory !== undefined ? [element('WorkingDirectory', a.workingDirectory)] : []),
    ...a.environment.map(({ name, value }) => element('Environment', value, ` name="${escapeXml(name)}"`)),
    '</p:POSIXApplication>',
  ].join('');
}

/** sla:ServiceLevel's sequence (schemas/sla-terms.xsd). */
const serviceLevelOrder = [
  'RuntimeEstimate',
  'EarliestStart',
  'Deadline',
  'RequestKind',
  'GuaranteeLevel',
  'CheckpointFrequency',
  'MaxCoveredOutages',
  'MigrationPolicy',
  'SecurityPolicy',
  'ChargeAccount',
  'UseReservation',
  'Interactive',
  'Bid',
  'ResumesFromCheckpoint',
];

/** The offer with `charge` as the sla:ChargeAccount of its job's service level (what `wsag create --account` sends). */
export function withChargeAccount(offerXml: string, charge: ChargeAccount): string {
  return withXml(offerXml, 'offer', (doc) => {
    const levels = all(doc.root, './/wsag:ServiceDescriptionTerm//sla:ServiceLevel');
    if (levels.length !== 1)
      throw new Error(
        `the offer has ${levels.length} sla:ServiceLevel elements: a charge account goes into exactly one`,
      );
    const level = levels[0] as (typeof levels)[number];
    if (one(level, 'sla:ChargeAccount')) throw new Error('the offer already names an sla:ChargeAccount');
    const fields = [
      ['Account', charge.account],
      ['VirtualOrganisation', charge.virtualOrganisation],
      ['Group', charge.group],
    ] as const;
    const inner = fields
      .filter(([, v]) => v !== undefined)
      .map(([name, v]) => `<s:${name} xmlns:s="${ns.sla}">${escapeXml(v as string)}</s:${name}>`)
      .join('');
    return withFragment(doc.root, childInOrder(level, 'ChargeAccount', serviceLevelOrder), inner);
  });
}
