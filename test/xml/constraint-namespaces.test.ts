import { describe, expect, it } from 'vitest';
import { namespacesNamed } from '../../src/xml/constraint-namespaces.js';
import { elementChildren } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';

const named = (components: string) =>
  withXml(
    `<wsag:ItemConstraint xmlns:wsag="${ns.wsag}" xmlns:xs="${ns.xs}" xmlns:jsdl="${ns.jsdl}" xmlns:sla="${ns.sla}">${components}</wsag:ItemConstraint>`,
    'constraint',
    (doc) => namespacesNamed(elementChildren(doc.root)),
  );

describe('the namespaces an ItemConstraint names', () => {
  it('are those of the types, elements and bases it refers to, not XML Schema itself', () => {
    expect(named('<xs:maxInclusive value="4"/><xs:minInclusive value="1"/>')).toEqual(new Set());
    expect(
      named(
        '<xs:sequence><xs:element name="Exact" type="jsdl:Exact_Type"/><xs:element ref="sla:Deadline"/></xs:sequence>',
      ),
    ).toEqual(new Set([ns.jsdl, ns.sla]));
    expect(named('<xs:simpleType><xs:restriction base="sla:GuaranteeLevelType"/></xs:simpleType>')).toEqual(
      new Set([ns.sla]),
    );
    expect(named('<xs:simpleType><xs:union memberTypes="xs:int jsdl:Exact_Type"/></xs:simpleType>')).toEqual(
      new Set([ns.jsdl]),
    );
    expect(
      named(
        '<xs:sequence><xs:element name="Level"><xs:simpleType><xs:restriction base="xs:string"/></xs:simpleType></xs:element><xs:any processContents="skip"/></xs:sequence>',
      ),
    ).toEqual(new Set());
  });

  it('are every namespace when the constraint validates content it does not name: lax or strict wildcards, xs:anyType', () => {
    expect(named('<xs:sequence><xs:any processContents="lax"/></xs:sequence>')).toBe('every');
    expect(named('<xs:sequence><xs:any/></xs:sequence>')).toBe('every'); // strict by default
    expect(named('<xs:sequence><xs:element name="Anything"/></xs:sequence>')).toBe('every');
    expect(named('<xs:sequence><xs:element name="Anything" type="xs:anyType"/></xs:sequence>')).toBe('every');
    expect(
      named('<xs:sequence><xs:element name="A" type="xs:string"/><xs:anyAttribute namespace="##other"/></xs:sequence>'),
    ).toBe('every');
  });

  it('name an undeclared prefix as the problem', () => {
    expect(() => named('<xs:sequence><xs:element name="A" type="nope:T"/></xs:sequence>')).toThrow(
      /prefix "nope" of nope:T is not declared/,
    );
  });
});
