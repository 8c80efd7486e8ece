import { describe, expect, it } from 'vitest';
import { rootChildEnd } from '../../src/xml/element-end.js';

/** The text from the offset on, for readable expectations. */
const at = (xml: string, qname: string) => {
  const offset = rootChildEnd(xml, qname);
  return offset === undefined ? undefined : xml.slice(offset);
};

describe('rootChildEnd: where a child of the root element ends, in the text', () => {
  it("finds the child's end tag, past its own children", () => {
    expect(at('<r><a:C x="1"><d/><e>t</e></a:C><a:T/></r>', 'a:C')).toBe('</a:C><a:T/></r>');
    expect(at('<r>\n  <C >text</C >\n</r>', 'C')).toBe('</C >\n</r>');
  });

  it('is not misled by the end tag written inside comments, CDATA, processing instructions or attribute values', () => {
    const xml = '<r><C a="</C> >" b=\'</C>\'><!-- </C> --><![CDATA[</C>]]><?pi </C>?>x</C><T/></r>';
    expect(at(xml, 'C')).toBe('</C><T/></r>');
  });

  it('is not misled by a nested element of the same name, or one of that name deeper in another child', () => {
    expect(at('<r><N><C>n</C></N><C><C>inner</C></C><T/></r>', 'C')).toBe('</C><T/></r>');
  });

  it('has no answer for an empty-element tag, a missing child or a DOCTYPE', () => {
    expect(at('<r><C/><T/></r>', 'C')).toBeUndefined();
    expect(at('<r><T/></r>', 'C')).toBeUndefined();
    expect(at('<!DOCTYPE r><r><C>x</C></r>', 'C')).toBeUndefined();
    expect(at('<r><CX>x</CX></r>', 'C')).toBeUndefined();
  });
});
