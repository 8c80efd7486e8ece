import type { XmlElement } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { compileItemConstraint, type ItemConstraintCheck } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';

const compile = (facets: string): ItemConstraintCheck =>
  withXml(`<wsag:ItemConstraint xmlns:wsag="${ns.wsag}" xmlns:xs="${ns.xs}">${facets}</wsag:ItemConstraint>`, 'constraint', (doc) => compileItemConstraint(doc.root));
const verdict = (check: ItemConstraintCheck, value: string) => withXml(`<v>${value}</v>`, 'value', (doc) => check.violation(doc.root as XmlElement));

describe('simple-type item constraints', () => {
  it('give the same verdict for a value seen before, per constraint, whether it passes or not', () => {
    const atMostFour = compile('<xs:maxInclusive value="4"/>');
    const atMostTwo = compile('<xs:maxInclusive value="2"/>');
    for (let round = 0; round < 3; round++) {
      expect(verdict(atMostFour, '5')).toMatch(/^value "5" violates facet maxInclusive: The value '5' is greater than the maximum value allowed \('4'\)/);
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
