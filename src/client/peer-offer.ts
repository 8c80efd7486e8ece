import type { XmlElement } from 'libxml2-wasm';
import type { ServiceRequest } from '../domain/terms.js';
import type { TermChanges } from '../engine/ports.js';
import { withXml } from '../xml/libxml.js';
import { ns, prefixes } from '../xml/namespaces.js';
import { offerFromTemplate } from '../xml/offer-from-template.js';
import { readOffer } from '../xml/offer-reader.js';
import { offerWithTerms } from '../xml/offer-slot.js';
import { c14n } from '../xml/item-constraint.js';
import { childInOrder, setText } from '../xml/xml-edit.js';
import { all } from '../xml/xpath.js';

/**
 * The offer a provider sends a peer (cross-border migration, Full standby): one of the
 * peer's own templates with the job's terms filled in. The template becomes an offer
 * (offerFromTemplate), the static demands the compatibility profile needs are written into
 * jsdl:Resources and sla:ServiceLevel (operating system, architecture, libraries: the peer
 * checks them when it decides, Hovestadt 2006, section 4.4.2), and the times and sizes are moved
 * with offerWithTerms, which keeps guarantee objectives in step with them.
 */

export interface PeerTemplate {
  id: string;
  name: string;
  xml: string;
}

/** jsdl:Resources_Type's sequence (schemas/jsdl.xsd); extension elements (sla:*) follow it. */
const resourcesOrder = [
  'CandidateHosts',
  'FileSystem',
  'ExclusiveExecution',
  'OperatingSystem',
  'CPUArchitecture',
  'IndividualCPUSpeed',
  'IndividualCPUTime',
  'IndividualCPUCount',
  'IndividualNetworkBandwidth',
  'IndividualPhysicalMemory',
  'IndividualVirtualMemory',
  'IndividualDiskSpace',
  'TotalCPUTime',
  'TotalCPUCount',
  'TotalPhysicalMemory',
  'TotalVirtualMemory',
  'TotalDiskSpace',
  'TotalResourceCount',
];
/** sla:ServiceLevelType's sequence (schemas/sla-terms.xsd), as src/xml/offer-slot.ts keeps it. */
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

/** Name and TemplateId of a served template document. */
export function peerTemplate(xml: string): PeerTemplate {
  return withXml(xml, 'template', (doc) => ({
    id: (doc.eval('string(/wsag:Template/@wsag:TemplateId)', prefixes) as string).trim(),
    name: (doc.eval('string(/wsag:Template/wsag:Name)', prefixes) as string).trim(),
    xml,
  }));
}

/**
 * The template to write the offer from: the one named `wanted`, else the first served
 * template of the job's shape (a reservation window, or a deadline with a service level).
 */
export function chooseTemplate(
  templates: PeerTemplate[],
  request: ServiceRequest,
  wanted?: string,
): PeerTemplate | { reason: string } {
  if (wanted !== undefined) {
    const named = templates.find((t) => t.name === wanted || t.id === wanted);
    return (
      named ?? {
        reason:
          `the peer serves no template "${wanted}"; it serves: ` +
          `${templates.map((t) => t.name).join(', ') || 'none'}`,
      }
    );
  }
  const fits = templates.find((t) => {
    try {
      const offered = withXml(offerFromTemplate(t.xml), 'offer', (doc) => readOffer(doc.root)).request;
      return request.window
        ? offered.window !== undefined
        : offered.window === undefined && offered.deadline !== undefined;
    } catch {
      return false; // a template this client cannot read is not a candidate
    }
  });
  const shape = request.window ? 'a reservation window' : 'a deadline';
  return (
    fits ?? {
      reason: `none of the peer's templates (${templates.map((t) => t.name).join(', ') || 'none'}) has ${shape}`,
    }
  );
}

/** The wsag:AgreementOffer for `request` written from `template` (canonical XML). */
export function peerOffer(template: PeerTemplate, request: ServiceRequest, name?: string): string {
  const withDemands = withXml(offerFromTemplate(template.xml), 'offer', (doc) => {
    const root = doc.root;
    if (name !== undefined) setName(root, name);
    const sdt = 'wsag:Terms//wsag:ServiceDescriptionTerm';
    for (const resources of all(root, `${sdt}//jsdl:Resources[jsdl:TotalResourceCount]`))
      writeResources(root, resources, request);
    for (const level of all(root, `${sdt}//sla:ServiceLevel`)) writeServiceLevel(level, request);
    return c14n(root);
  });
  const offer = withXml(withDemands, 'offer', (doc) => readOffer(doc.root));
  const changes: TermChanges = { nodeCount: request.nodeCount };
  if (request.window) changes.window = request.window;
  else {
    if (request.runtimeSeconds !== undefined) changes.runtimeSeconds = request.runtimeSeconds;
    if (request.earliestStart) changes.earliestStart = request.earliestStart;
    if (request.deadline) changes.deadline = request.deadline;
  }
  return offerWithTerms(offer, changes).offerSource;
}

function setName(root: XmlElement, name: string): void {
  const existing = all(root, 'wsag:Name')[0];
  if (existing) {
    setText(existing, name);
    return;
  }
  // wsag:Name comes first (wsag:AgreementType).
  const first = all(root, '*')[0];
  (first
    ? first.prependElement('Name', root.prefix || undefined)
    : root.addElement('Name', root.prefix || undefined)
  ).addText(name);
}

/**
 * Operating system, architecture, CPUs and memory per node, interconnect and libraries, where the request names them.
 */
function writeResources(root: XmlElement, resources: XmlElement, request: ServiceRequest): void {
  const jsdl = (parent: XmlElement, local: string): XmlElement => childInOrder(parent, local, resourcesOrder);
  if (request.operatingSystem !== undefined) {
    const type = childInOrder(jsdl(resources, 'OperatingSystem'), 'OperatingSystemType', [
      'OperatingSystemType',
      'OperatingSystemVersion',
      'Description',
    ]);
    setText(childInOrder(type, 'OperatingSystemName', ['OperatingSystemName']), request.operatingSystem);
  }
  if (request.architecture !== undefined) {
    setText(
      childInOrder(jsdl(resources, 'CPUArchitecture'), 'CPUArchitectureName', ['CPUArchitectureName']),
      request.architecture,
    );
  }
  if (request.cpusPerNode !== undefined) exact(jsdl(resources, 'IndividualCPUCount'), request.cpusPerNode);
  if (request.memoryPerNodeMiB !== undefined)
    exact(jsdl(resources, 'IndividualPhysicalMemory'), request.memoryPerNodeMiB * 1024 * 1024);
  const sla = slaPrefix(root);
  for (const old of all(resources, 'sla:Interconnect | sla:Library')) old.remove();
  if (request.interconnect !== undefined) resources.addElement('Interconnect', sla).addText(request.interconnect);
  for (const library of request.libraries) {
    const element = resources.addElement('Library', sla);
    element.setAttr('Name', library.name);
    element.setAttr('Version', library.version);
    if (library.loaded) element.setAttr('Loaded', 'true');
  }
}

/** A JSDL range value written as one Exact value. */
function exact(range: XmlElement, value: number): void {
  for (let c = range.firstChild; c; c = range.firstChild) c.remove();
  range.addElement('Exact', range.prefix || undefined).addText(String(value));
}

/** Binding terms at the job's guarantee level; the customer's migration scope goes with it. */
function writeServiceLevel(level: XmlElement, request: ServiceRequest): void {
  const child = (local: string): XmlElement => childInOrder(level, local, serviceLevelOrder);
  // A reservation's length is its window; a runtime estimate is written only where the template has a deadline.
  if (!request.window && request.runtimeSeconds !== undefined)
    setText(child('RuntimeEstimate'), String(Math.ceil(request.runtimeSeconds)));
  setText(child('RequestKind'), 'Binding');
  setText(child('GuaranteeLevel'), request.guaranteeLevel);
  if (!request.window || all(level, 'sla:MaxCoveredOutages').length > 0)
    setText(child('MaxCoveredOutages'), String(request.maxCoveredOutages));
  const policy = all(level, 'sla:MigrationPolicy')[0];
  if (policy && request.migrationPolicy) policy.setAttr('Scope', request.migrationPolicy.scope);
  if (request.resumesFromCheckpointBytes !== undefined)
    setText(child('ResumesFromCheckpoint'), String(request.resumesFromCheckpointBytes));
}

/** The prefix bound to the SLA term namespace on the root, declared there if none is. */
function slaPrefix(root: XmlElement): string {
  const bound = Object.entries(root.namespaces).find(([prefix, uri]) => prefix && uri === ns.sla)?.[0];
  if (bound) return bound;
  let prefix = 'sla';
  for (let i = 1; prefix in root.namespaces; i++) prefix = `sla${i}`;
  root.addNsDeclaration(ns.sla, prefix);
  return prefix;
}
