import { markupAt, tagEnd } from './raw-guard.js';

/**
 * Where, in well-formed XML text, the root element's child `qname` (as written, prefix
 * included) ends: the offset of its end tag, so content can be added as its last child
 * without building a tree. Undefined when the child is not there, is written as an empty
 * element (`<x/>`, no end tag to insert before), or the text holds a DOCTYPE (whose
 * declarations this scan does not read). Comments, CDATA sections and processing
 * instructions are skipped, so text inside them is never taken for a tag.
 */
export function rootChildEnd(xml: string, qname: string): number | undefined {
  let depth = 0;
  let inside = false;
  for (let i = 0; ; ) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) return undefined;
    const markup = markupAt(xml, lt);
    if (markup) {
      if (markup.what === 'declaration' || markup.end < 0) return undefined;
      i = markup.end;
      continue;
    }
    const close = tagEnd(xml, lt + 1);
    if (xml[lt + 1] === '/') {
      if (inside && depth === 2) return xml.slice(lt + 2, close).trimEnd() === qname ? lt : undefined;
      depth--;
    } else {
      const empty = xml[close - 1] === '/';
      if (depth === 1 && nameOf(xml, lt + 1, close) === qname) {
        if (empty) return undefined;
        inside = true;
      }
      if (!empty) depth++;
    }
    i = close + 1;
  }
}

function nameOf(xml: string, from: number, close: number): string {
  const end = xml.slice(from, close).search(/[\s/]/);
  return xml.slice(from, end < 0 ? close : from + end);
}
