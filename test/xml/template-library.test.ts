import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { TemplateError, TemplateLibrary, renderTimeTokens } from '../../src/xml/template-library.js';
import { projectRoot } from '../support/server.js';
import { receivedOffer, violationOf } from '../support/offers.js';

const samples = path.resolve(projectRoot, 'test/reference/ws-agreement/samples');
const shipped = TemplateLibrary.fromDirectory(path.join(projectRoot, 'templates'));

function check(library: TemplateLibrary, templateName: string, offerXml: string): string | undefined {
  const template = library.find({ name: templateName });
  if (!template) throw new Error(`no template ${templateName}`);
  return violationOf(() => library.checkCreationConstraints(template, receivedOffer(offerXml)));
}

function rendered(library: TemplateLibrary, name: string): string {
  return library
    .render(new Date('2026-11-21T12:00:00Z'))
    .find((t) => t.includes(`<wsag:Name>${name}</wsag:Name>`)) as string;
}

describe('the reference WSAG4J sample template (written by another implementation)', () => {
  const library = TemplateLibrary.fromFiles([path.join(samples, 'wsag4j-sample-template.filled.xml')]);
  const template = rendered(library, 'SAMPLE-TEMPLATE');

  it('loads with all its Items', () => {
    expect(library.list()).toEqual([expect.objectContaining({ id: '1', name: 'SAMPLE-TEMPLATE', constraintCount: 0 })]);
    expect(library.list()[0]?.items.map((i) => i.name)).toHaveLength(10);
  });

  it('accepts its own defaults as an offer', () => {
    expect(check(library, 'SAMPLE-TEMPLATE', offerFromTemplate(template))).toBeUndefined();
  });

  it('enforces the maxInclusive facet on TotalResourceCount/Exact', () => {
    const offer = offerFromTemplate(template, [
      { location: 'ResourcesSDT_JobDefinition_JobDescription_Resources_TotalResourceCount_Exact', value: '5' },
    ]);
    expect(check(library, 'SAMPLE-TEMPLATE', offer)).toMatch(
      /^Item 'ResourcesSDT_JobDefinition_JobDescription_Resources_TotalResourceCount_Exact' at \/wsag:AgreementOffer\/.*jsdl:Exact: value "5" violates facet maxInclusive/,
    );
  });

  it('enforces the enumeration in a simpleType restriction (ServiceProvider)', () => {
    const offer = offerFromTemplate(template, [
      { location: 'AgreementOffer_Context_ServiceProvider', value: 'AgreementInitiator' },
    ]);
    expect(check(library, 'SAMPLE-TEMPLATE', offer)).toMatch(
      /Item 'AgreementOffer_Context_ServiceProvider'.*violates facet enumeration/,
    );
  });

  it('enforces content models: an element with maxOccurs 0 may not appear', () => {
    const offer = offerFromTemplate(template).replace(
      '<wsag:Context>',
      '<wsag:Context><wsag:AgreementInitiator>me</wsag:AgreementInitiator>',
    );
    expect(check(library, 'SAMPLE-TEMPLATE', offer)).toMatch(
      /^Item 'AgreementOffer_Context' at \/wsag:AgreementOffer\/wsag:Context: content of wsag:Context does not match the constraint: Element .* is not expected/,
    );
  });

  it('enforces content models: a required element may not be missing', () => {
    const offer = offerFromTemplate(template).replace(/<jsdl:CandidateHosts>.*?<\/jsdl:CandidateHosts>/s, '');
    expect(check(library, 'SAMPLE-TEMPLATE', offer)).toMatch(
      /Item 'ResourcesSDT_JobDefinition_JobDescription_Resources'.*content of jsdl:Resources/,
    );
  });

  it('enforces content models on an empty element written self-closing', () => {
    const offer = offerFromTemplate(template).replace(/<jsdl:Resources>.*?<\/jsdl:Resources>/s, '<jsdl:Resources/>');
    expect(offer).toContain('<jsdl:Resources/>');
    expect(check(library, 'SAMPLE-TEMPLATE', offer)).toMatch(
      /Item 'ResourcesSDT_JobDefinition_JobDescription_Resources'.*content of jsdl:Resources does not match the constraint: .*Missing child element/,
    );
  });

  it('refuses the unfilled sample, naming the Item whose facet is not a number', () => {
    expect(() => TemplateLibrary.fromFiles([path.join(samples, 'wsag4j-sample-template.xml')])).toThrow(TemplateError);
    expect(() => TemplateLibrary.fromFiles([path.join(samples, 'wsag4j-sample-template.xml')])).toThrow(
      /Item '|violates the schema/,
    );
  });
});

describe('the shipped templates', () => {
  it('are five, with creation constraints', () => {
    expect(shipped.list().map((t) => [t.name, t.id])).toEqual([
      ['advance-reservation', 'advance-reservation-v1'],
      ['background-job', 'background-job-v1'],
      ['best-effort-job', 'best-effort-job-v1'],
      ['deadline-job', 'deadline-job-v1'],
      ['interactive-job', 'interactive-job-v1'],
    ]);
    for (const t of shipped.list()) {
      expect(t.items.length).toBeGreaterThan(2);
      expect(t.constraintCount).toBeGreaterThan(0);
    }
  });

  it('accept their own defaults', () => {
    for (const t of shipped.list())
      expect(check(shipped, t.name, offerFromTemplate(rendered(shipped, t.name)))).toBeUndefined();
  });

  it('serve time tokens as dates relative to now, rounded up to the minute', () => {
    expect(renderTimeTokens('${now}|${now+PT6H}|${now+P1DT30M}', new Date('2026-11-21T12:00:30Z'))).toBe(
      '2026-11-21T12:01:00Z|2026-11-21T18:01:00Z|2026-11-22T12:31:00Z',
    );
    expect(rendered(shipped, 'deadline-job')).toContain('<sla:Deadline>2026-11-21T18:00:00Z</sla:Deadline>');
  });

  it('enforce wsag:Constraint expressions (Full needs at least one covered outage)', () => {
    const offer = offerFromTemplate(rendered(shipped, 'deadline-job'), [
      { location: 'GuaranteeLevel', value: 'Full' },
      { location: 'MaxCoveredOutages', value: '0' },
    ]);
    expect(check(shipped, 'deadline-job', offer)).toMatch(/^Constraint #2 is not met: not\(/);
  });

  it('enforce content-model Items (the node count must be Exact)', () => {
    const offer = offerFromTemplate(rendered(shipped, 'deadline-job')).replace(
      /<jsdl:TotalResourceCount><jsdl:Exact>4<\/jsdl:Exact><\/jsdl:TotalResourceCount>/,
      '<jsdl:TotalResourceCount><jsdl:LowerBoundedRange>4</jsdl:LowerBoundedRange></jsdl:TotalResourceCount>',
    );
    expect(check(shipped, 'deadline-job', offer)).toMatch(/Item 'NodeCountForm'/);
  });
});

describe('templates that cannot be served stop the server with a message naming the file and part', () => {
  function libraryOf(xml: string): () => TemplateLibrary {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-templates-'));
    fs.writeFileSync(path.join(dir, 'broken.xml'), xml);
    return () => TemplateLibrary.fromDirectory(dir);
  }
  const base = fs.readFileSync(path.join(projectRoot, 'templates/deadline-job.xml'), 'utf8');

  it('an Item whose Location is not XPath', () => {
    expect(libraryOf(base.replace('//sla:ServiceLevel/sla:RuntimeEstimate', '//sla:ServiceLevel/[['))).toThrow(
      /broken.xml: Item 'RuntimeEstimate' cannot be used/,
    );
  });

  it('a Constraint that is not an expression', () => {
    expect(
      libraryOf(
        base.replace(
          /<wsag:Constraint>not\(.*?<\/wsag:Constraint>/,
          '<wsag:Constraint><x:y xmlns:x="urn:x"/></wsag:Constraint>',
        ),
      ),
    ).toThrow(/broken.xml: Constraint #2 must be an XPath 1.0 boolean expression/);
  });

  it('a document that is not a template', () => {
    expect(libraryOf('<x/>')).toThrow(/broken.xml: the root element must be wsag:Template/);
  });

  it('two templates with one id', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-templates-'));
    fs.writeFileSync(path.join(dir, 'a.xml'), base);
    fs.writeFileSync(path.join(dir, 'b.xml'), base);
    expect(() => TemplateLibrary.fromDirectory(dir)).toThrow(
      /b.xml: TemplateId "deadline-job-v1" or Name "deadline-job" is already used/,
    );
  });
});
