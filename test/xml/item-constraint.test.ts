import type { XmlElement } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { compileItemConstraint, type ItemConstraintCheck } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';

const compile = (facets: string): ItemConstraintCheck =>
  withXml(
    `<wsag:ItemConstraint xmlns:wsag="${ns.wsag}" xmlns:xs="${ns.xs}">${facets}</wsag:ItemConstraint>`,
    'constraint',
    (doc) => compileItemConstraint(doc.root),
  );
const verdict = (check: ItemConstraintCheck, value: string) =>
  withXml(`<v>${value}</v>`, 'value', (doc) => check.violation(doc.root as XmlElement));

describe('simple-type item constraints', () => {
  it('give the same verdict for a value seen before, per constraint, whether it passes or not', () => {
    const atMostFour = compile('<xs:maxInclusive value="4"/>');
    const atMostTwo = compile('<xs:maxInclusive value="2"/>');
    for (let round = 0; round < 3; round++) {
      expect(verdict(atMostFour, '5')).toMatch(
        /^value "5" violates facet maxInclusive: The value '5' is greater than the maximum value allowed \('4'\)/,
      );
      expect(verdict(atMostFour, '3')).toBeUndefined();
      expect(verdict(atMostTwo, '3')).toMatch(/^value "3" violates facet maxInclusive/);
    }
  });

  it('keep answering right past the values they remember, and for values too long to remember', () => {
    const digits = compile('<xs:pattern value="[0-9]+"/>');
    for (let i = 0; i < 600; i++) expect(verdict(digits, String(i))).toBeUndefined();
    expect(verdict(digits, 'x1')).toMatch(/violates facet pattern/);
    const long = '7'.repeat(300);
    expect(verdict(digits, long)).toBeUndefined();
    expect(verdict(digits, `${long}x`)).toMatch(/violates facet pattern/);
    expect(verdict(digits, `${long}x`)).toMatch(/violates facet pattern/);
  });
});

describe('content-model item constraints', () => {
  const subject = (content: string) =>
    `<Subject xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:sla="${ns.sla}">${content}</Subject>`;
  const on = (check: ItemConstraintCheck, xml: string) => withXml(xml, 'subject', (doc) => check.violation(doc.root));

  it('give the verdict of a schema with every namespace where the constraint names fewer (an xsi:type from a namespace it does not name)', () => {
    // The constraint names no namespace, so it is checked first without the sla: schema; the xsi:type needs it.
    const kind = compile('<xs:sequence><xs:element name="Kind" type="xs:string"/></xs:sequence>');
    expect(on(kind, subject('<Kind xsi:type="sla:RequestKindType">NonBinding</Kind>'))).toBeUndefined();
    expect(on(kind, subject('<Kind xsi:type="sla:RequestKindType">Sometimes</Kind>'))).toMatch(
      /^content of Subject does not match the constraint: .*'Sometimes' is not an element of the set/,
    );
    expect(on(kind, subject('<Kind>anything</Kind><Extra/>'))).toMatch(
      /^content of Subject does not match the constraint: .*Extra.*not expected/,
    );
  });

  it('resolve the components they name in their namespaces', () => {
    const count = compile(
      `<xs:sequence xmlns:jsdl="${ns.jsdl}"><xs:element name="Exact" type="jsdl:Exact_Type"/></xs:sequence>`,
    );
    expect(on(count, subject('<Exact epsilon="0.5">4</Exact>'))).toBeUndefined();
    expect(on(count, subject('<Exact>four</Exact>'))).toMatch(
      /'four' is not a valid value of the atomic type 'xs:double'/,
    );
  });

  it('give the same verdict for an element seen before, past those they remember and for long ones', () => {
    const count = compile(
      `<xs:sequence xmlns:jsdl="${ns.jsdl}"><xs:element name="Exact" type="jsdl:Exact_Type"/></xs:sequence>`,
    );
    const inJsdl = (content: string) =>
      `<jsdl:TotalResourceCount xmlns:jsdl="${ns.jsdl}">${content}</jsdl:TotalResourceCount>`;
    const long = `<Exact>${'7'.repeat(3000)}</Exact>`;
    for (let round = 0; round < 3; round++) {
      expect(on(count, subject('<Exact>4</Exact>'))).toBeUndefined();
      expect(on(count, subject('<Exact>four</Exact>'))).toMatch(/'four' is not a valid value/);
      // In the jsdl: namespace the content model's Exact is jsdl:Exact.
      expect(on(count, inJsdl('<Exact>4</Exact>'))).toMatch(
        /^content of jsdl:TotalResourceCount does not match the constraint: Element 'Exact': This element is not expected/,
      );
      expect(on(count, inJsdl('<jsdl:Exact>4</jsdl:Exact>'))).toBeUndefined();
      expect(on(count, subject(long))).toBeUndefined();
      expect(on(count, subject(`${long}<Extra/>`))).toMatch(/Extra.*not expected/);
    }
    for (let i = 0; i < 300; i++) expect(on(count, subject(`<Exact>${i}</Exact>`))).toBeUndefined();
    expect(on(count, subject('<Exact>four</Exact>'))).toMatch(/'four' is not a valid value/);
  });
});

describe('item constraints naming the xml: namespace', () => {
  it('compile and apply xml:lang', () => {
    const check = withXml(
      `<wsag:ItemConstraint xmlns:wsag="${ns.wsag}" xmlns:xs="${ns.xs}"><xs:sequence><xs:element name="Text"><xs:complexType><xs:simpleContent><xs:extension base="xs:string"><xs:attribute ref="xml:lang" use="required"/></xs:extension></xs:simpleContent></xs:complexType></xs:element></xs:sequence></wsag:ItemConstraint>`,
      'constraint',
      (doc) => compileItemConstraint(doc.root),
    );
    const on = (xml: string) => withXml(xml, 'subject', (doc) => check.violation(doc.root));
    expect(on('<Subject><Text xml:lang="en">hello</Text></Subject>')).toBeUndefined();
    expect(on('<Subject><Text>hello</Text></Subject>')).toMatch(/lang.*is required/);
  });
});
