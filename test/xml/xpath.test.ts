import { type XmlElement, XmlXPath } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { withXml } from '../../src/xml/libxml.js';
import { ns, prefixes } from '../../src/xml/namespaces.js';
import { all, namespacesNamedIn, one, text } from '../../src/xml/xpath.js';

/** What libxml2's XPath selects for `path` at `context`, for comparison with `all`. */
function byXPath(context: XmlElement, path: string): XmlElement[] {
  const xpath = XmlXPath.compile(path, namespacesNamedIn(path, prefixes));
  try {
    return context.eval(xpath) as XmlElement[];
  } finally {
    xpath.dispose();
  }
}

const doc = `<wsag:Terms xmlns:wsag="${ns.wsag}" xmlns:jsdl="${ns.jsdl}" xmlns:other="urn:other">
  <!-- a comment --><wsag:All>
    <wsag:ServiceDescriptionTerm wsag:Name="A">text<jsdl:JobDefinition><jsdl:Exact>1</jsdl:Exact></jsdl:JobDefinition></wsag:ServiceDescriptionTerm>
    <other:ServiceDescriptionTerm/>
    <ServiceDescriptionTerm/>
    <wsag:ServiceDescriptionTerm wsag:Name="B"><jsdl:JobDefinition><jsdl:Exact>2</jsdl:Exact><jsdl:Exact>3</jsdl:Exact></jsdl:JobDefinition></wsag:ServiceDescriptionTerm>
    <wsag:GuaranteeTerm wsag:Name="G"/>
  </wsag:All>
</wsag:Terms>`;

describe('paths of child steps', () => {
  it('select the elements XPath selects, in document order', () => {
    withXml(doc, 'terms', (parsed) => {
      const root = parsed.root;
      const paths = [
        'wsag:All',
        'wsag:All/*',
        'wsag:All/wsag:*',
        'wsag:All/wsag:ServiceDescriptionTerm',
        'wsag:All/wsag:ServiceDescriptionTerm/jsdl:JobDefinition/jsdl:Exact',
        'wsag:All/*/jsdl:JobDefinition/*',
        'wsag:All/jsdl:ServiceDescriptionTerm',
        'wsag:Nothing/wsag:All',
        // Evaluated as XPath: not child steps over our prefixes.
        './/jsdl:Exact',
        'wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name="B"]/jsdl:JobDefinition/jsdl:Exact',
        'wsag:All/node()',
      ];
      for (const path of paths) {
        const expected = byXPath(root, path).map((e) => e.toString());
        expect(
          all(root, path).map((e) => e.toString()),
          path,
        ).toEqual(expected);
      }
      expect(
        all(root, 'wsag:All/wsag:ServiceDescriptionTerm/jsdl:JobDefinition/jsdl:Exact').map((e) => e.content),
      ).toEqual(['1', '2', '3']);
      expect(all(root, 'wsag:All/*')).toHaveLength(5);
      expect(text(root, 'wsag:All/wsag:ServiceDescriptionTerm/jsdl:JobDefinition/jsdl:Exact')).toBe('1');
      expect(one(root, 'wsag:All/wsag:GuaranteeTerm')?.attrs.map((a) => a.value)).toEqual(['G']);
    });
  });
});
