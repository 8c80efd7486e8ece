import { describe, expect, it } from 'vitest';
import { MalformedMessage, MessageTooLarge } from '../../src/domain/errors.js';
import { guardRawXml, type LastChildOutline } from '../../src/xml/raw-guard.js';

const limits = { maxBytes: 1024, maxDepth: 4 };
const guard = (xml: string) => guardRawXml(Buffer.from(xml), limits);

describe('the raw-body guard', () => {
  it("outlines the root's last child: its child elements, and where the first one's content lies", () => {
    const outlined = (xml: string) => {
      const outline: LastChildOutline = { children: 0 };
      guardRawXml(Buffer.from(xml), { maxBytes: 1024, maxDepth: 8 }, outline);
      return {
        ...outline,
        ...(outline.content ? { text: xml.slice(outline.content.start, outline.content.end) } : {}),
      };
    };
    const op = '<op a=">"><x><op>in</op></x><!-- </op> --><![CDATA[</op>]]></op>';
    expect(outlined(`<e><h><m>1</m></h><b>\n${op}\n</b></e>`)).toEqual({
      children: 1,
      content: expect.anything(),
      text: '<x><op>in</op></x><!-- </op> --><![CDATA[</op>]]>',
    });
    expect(outlined('<e><b><op/></b></e>')).toEqual({ children: 1 });
    expect(outlined('<e><b><op>1</op><op>2</op></b></e>')).toMatchObject({ children: 2, text: '1' });
    expect(outlined('<e><b><op>1</op></b><h/></e>')).toEqual({ children: 0 });
    expect(outlined('<e><b><op>1</op></b><h><x>2</x></h></e>')).toMatchObject({ children: 1, text: '2' });
    expect(outlined('<e><b><op>never ends')).toMatchObject({ children: 1, content: { end: -1 } });
  });

  it('passes ordinary XML, counting depth through comments, CDATA, quoted > and self-closing tags', () => {
    expect(() =>
      guard('<?xml version="1.0"?><a><b x="1>2"><c/><!-- <d><e><f> --><![CDATA[<g><h><i>]]></b></a>'),
    ).not.toThrow();
  });

  it('refuses nesting deeper than the limit', () => {
    expect(() => guard('<a><b><c><d><e/></d></c></b></a>')).not.toThrow();
    expect(() => guard('<a><b><c><d><e></e></d></c></b></a>')).toThrow(/nesting deeper than 4 elements/);
  });

  it('refuses any DOCTYPE, any other markup declaration, and processing instructions', () => {
    expect(() => guard('<!DOCTYPE a><a/>')).toThrow(MalformedMessage);
    expect(() => guard('<!doctype a><a/>')).toThrow(/DOCTYPE is not allowed/);
    expect(() => guard('<a><!ENTITY x "y"></a>')).toThrow(/markup declaration/);
    expect(() => guard('<a><?php echo 1 ?></a>')).toThrow(/processing instructions are not allowed/);
    expect(() => guard('<a/><?xml version="1.0"?>')).toThrow(/processing instructions are not allowed/);
  });

  it('refuses unterminated comments, CDATA and tags, empty and oversized bodies', () => {
    expect(() => guard('<a><!-- x')).toThrow(/unterminated comment/);
    expect(() => guard('<a><![CDATA[ x')).toThrow(/unterminated CDATA/);
    expect(() => guard('<a x="1')).toThrow(/unterminated tag/);
    expect(() => guard('')).toThrow(/empty/);
    expect(() => guardRawXml(Buffer.alloc(2048, 32), limits)).toThrow(MessageTooLarge);
  });

  it('refuses a relative namespace name, naming it, and passes absolute ones, empty default namespaces and xmlns text that is not a declaration', () => {
    expect(() =>
      guard('<a xmlns="urn:x" xmlns:b=\'http://example.org/b\' xmlns:c="urn:c&amp;d"><b:x xmlns=""/></a>'),
    ).not.toThrow();
    expect(() =>
      guard('<a x=" xmlns:r=&quot;rel&quot;" y=\' xmlns:s="rel"\'>xmlns:t="rel" <b xmlns="urn:b"/></a>'),
    ).not.toThrow();
    expect(() => guard('<a><b xmlns:r="rel/path"/></a>')).toThrow(
      /namespace name xmlns:r="rel\/path" is a relative URI/,
    );
    expect(() => guard("<a xmlns = '#fragment'/>")).toThrow(/xmlns="#fragment" is a relative URI/);
    expect(() => guard('<a xmlns:r="&#x72;el"/>')).toThrow(/xmlns:r="rel" is a relative URI/);
    expect(() => guard('<a xmlns:r="&#104;ttp://x"/>')).not.toThrow();
  });
});
