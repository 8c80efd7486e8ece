import type { Application } from '../domain/terms.js';
import { escapeXml } from './escape.js';
import { withXml } from './libxml.js';
import { ns } from './namespaces.js';
import { childInOrder, withFragment } from './xml-edit.js';
import { all } from './xpath.js';

/** jsdl:JobDescription's sequence (JSDL 1.0). */
const jobDescriptionOrder = ['JobIdentification', 'Application', 'Resources', 'DataStaging'];

/**
 * The offer with `application` as its job's jsdl:Application (a jsdl-posix:POSIXApplication),
 * at its place in the job description: what `wsag create --run` sends.
 */
export function withApplication(offerXml: string, application: Application): string {
  return withXml(offerXml, 'offer', (doc) => {
    const descriptions = all(doc.root, './/wsag:ServiceDescriptionTerm//jsdl:JobDescription');
    if (descriptions.length !== 1) throw new Error(`the offer has ${descriptions.length} jsdl:JobDescription elements: an application goes into exactly one`);
    const description = descriptions[0] as (typeof descriptions)[number];
    if (all(description, 'jsdl:Application').length > 0) throw new Error('the offer\'s job description already has a jsdl:Application');
    return withFragment(doc.root, childInOrder(description, 'Application', jobDescriptionOrder), posixApplication(application));
  });
}

function posixApplication(a: Application): string {
  const element = (name: string, value: string, attributes = '') => `<p:${name}${attributes}>${escapeXml(value)}</p:${name}>`;
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
