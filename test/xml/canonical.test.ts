import fs from 'node:fs';
import path from 'node:path';
import { XmlC14NMode, XmlElement, type XmlDocument } from 'libxml2-wasm';
import { describe, expect, it } from 'vitest';
import { canonicalOfSource, canonicalXml, standaloneSource } from '../../src/xml/canonical.js';
import { withXml } from '../../src/xml/libxml.js';
import { offerXml } from './fixtures.js';

/** libxml2-wasm's own subtree canonicalisation, the reference canonicalXml must agree with. */
const reference = (element: XmlElement, mode: 'inclusive' | 'exclusive') =>
  element.canonicalizeToString({
    mode: mode === 'inclusive' ? XmlC14NMode.XML_C14N_1_0 : XmlC14NMode.XML_C14N_EXCLUSIVE_1_0,
  });

/** The canonical form, or that there is none (libxml2 cannot canonicalise an entity reference, for one). */
const outcome = (canonicalise: () => string): string => {
  try {
    return canonicalise();
  } catch {
    return '(refused)';
  }
};

function everyElement(doc: XmlDocument): XmlElement[] {
  const found: XmlElement[] = [];
  const visit = (element: XmlElement) => {
    found.push(element);
    for (let c = element.firstChild; c; c = c.next) if (c instanceof XmlElement) visit(c);
  };
  visit(doc.root);
  return found;
}

const templatesDir = path.resolve(import.meta.dirname, '../../templates');
const documents: Record<string, string> = {
  'an offer in a SOAP envelope': `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${offerXml('deadline-job')}</soap:Body></soap:Envelope>`,
  'a shipped template': fs.readFileSync(path.join(templatesDir, 'advance-reservation.xml'), 'utf8'),
  'inherited xml:lang, comments, unused and redeclared prefixes': `<a:r xmlns:a="urn:a" xmlns:b="urn:b" xml:lang="de"><!-- c --><a:x b:q="1" z="2" a:p="3"><b:y xmlns:a="urn:a2"><a:z>t &amp; &lt;</a:z></b:y></a:x><c xmlns="urn:c"><d/></c></a:r>`,
  'a processing instruction beside the root': `<?pi before?><r xmlns="urn:r"><s>1</s></r><?pi after?>`,
  'a DTD beside the root': `<!DOCTYPE r [<!ATTLIST s d CDATA "x">]><r xmlns:n="urn:n"><s n:a="1"/></r>`,
  'an entity reference the subtree cannot declare': `<!DOCTYPE r [<!ENTITY e "v">]><r xmlns="urn:r"><s><t>&e;</t></s></r>`,
  'a default namespace inherited and undeclared, a prefix named null': `<r xmlns="urn:d" xmlns:null="urn:n"><a null:x="1"><b xmlns=""><c/></b><null:d/></a></r>`,
  'awkward characters in text and attributes': `<r xmlns:p="urn:p?a=1&amp;b=2"><a v="&lt;&amp;&quot;&#9;&#10;&#13;'>" p:w="&#x1F600;">x&#13;y &gt; <![CDATA[<z>&]]>&#xE9;</a><e></e><f/></r>`,
};

describe('canonicalXml', () => {
  for (const [name, xml] of Object.entries(documents)) {
    it(`gives libxml2's subtree canonical form for every element of ${name}, in both modes`, () => {
      withXml(xml, name, (doc) => {
        const elements = everyElement(doc);
        expect(elements.length).toBeGreaterThan(1);
        for (const element of elements) {
          for (const mode of ['inclusive', 'exclusive'] as const)
            expect(outcome(() => canonicalXml(element, mode))).toBe(outcome(() => reference(element, mode)));
        }
      });
    });
  }

  for (const [name, xml] of Object.entries(documents)) {
    it(`writes every element of ${name} as a source that parses on its own to the same canonical form`, () => {
      withXml(xml, name, (doc) => {
        for (const element of everyElement(doc)) {
          const source = standaloneSource(element);
          expect(outcome(() => canonicalOfSource(source))).toBe(outcome(() => canonicalXml(element, 'inclusive')));
        }
      });
    });
  }

  it('keeps whitespace-only text nodes as the tree has them (a document parsed keeping blanks)', () => {
    const xml = '<r xmlns:a="urn:a">\n  <a:x>\n    <a:y> t </a:y>\n  </a:x>\n</r>';
    withXml(
      xml,
      'blanks',
      (doc) => {
        for (const element of everyElement(doc)) {
          for (const mode of ['inclusive', 'exclusive'] as const)
            expect(canonicalXml(element, mode)).toBe(reference(element, mode));
        }
        expect(canonicalXml(everyElement(doc)[1] as XmlElement, 'inclusive')).toContain('>\n    <a:y>');
      },
      { keepBlanks: true },
    );
  });

  it('leaves out what lies beside the root element', () => {
    withXml(documents['a processing instruction beside the root'] as string, 'pi', (doc) => {
      expect(canonicalXml(doc.root, 'inclusive')).toBe('<r xmlns="urn:r"><s>1</s></r>');
    });
  });
});
