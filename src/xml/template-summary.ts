import { XmlAttribute, XmlElement } from 'libxml2-wasm';
import { elementChildren } from './item-constraint.js';
import { withXml } from './libxml.js';
import { compileLocation } from './location.js';
import { selectInTemplate } from './offer-from-template.js';
import { prefixes } from './namespaces.js';

/** One creation-constraint Item of a template: what a value (`wsag create --set NAME=VALUE`, JSON `items`) sets. */
export interface ItemSummary {
  name: string;
  /** The Location as written in the template (XPath over the offer, maybe with a `declare namespace` prologue). */
  location: string;
  /** The Location as plain XPath (prologue and `$this` removed). */
  xpath: string;
  /**
   * The template's value at the location, if it selects one text value; absent when it selects nothing or an element
   * with children.
   */
  value?: string;
  /**
   * The ItemConstraint's facets, e.g. `{ facet: 'maxInclusive', value: '64' }`; structural constraints have no value.
   */
  constraint: { facet: string; value?: string }[];
  /** How many nodes the Location selects in the template (0: nothing to set). */
  selected: number;
}

export interface TemplateSummary {
  name: string;
  id: string;
  items: ItemSummary[];
  /** A reservation's window as the template has it (arp:StartTime and arp:EndTime), when it has one. */
  window?: { start: string; end: string };
  /** The template document as the server served it. */
  xml: string;
}

/** Reads name, TemplateId and Items out of a served template document. */
export function summarizeTemplate(xml: string): TemplateSummary {
  return withXml(xml, 'template', (doc) => {
    const root = doc.root;
    const name = (doc.eval('string(/wsag:Template/wsag:Name)', prefixes) as string).trim();
    const id = (doc.eval('string(/wsag:Template/@wsag:TemplateId)', prefixes) as string).trim();
    const items = (doc.find('/wsag:Template/wsag:CreationConstraints/wsag:Item', prefixes) as XmlElement[]).map(
      (item): ItemSummary => {
        const location = (item.eval('string(wsag:Location)', prefixes) as string).trim();
        let xpath = compileLocation(location, { ...prefixes, ...root.namespaces }).xpath;
        let value: string | undefined;
        let selected = 0;
        try {
          const found = selectInTemplate(root, location);
          xpath = found.xpath;
          value = firstValue(found.nodes);
          selected = found.nodes.length;
        } catch {
          value = undefined; // a Location the server accepted but libxml cannot evaluate here: show no default
        }
        const constraintElement = item.get('wsag:ItemConstraint', prefixes) as XmlElement | null;
        const constraint = constraintElement
          ? elementChildren(constraintElement).map((facet) => {
              const v = facet.attrs.find((a) => a.name === 'value')?.value;
              return v === undefined ? { facet: facet.name } : { facet: facet.name, value: v };
            })
          : [];
        const summary: ItemSummary = {
          name: (item.eval('string(@wsag:Name)', prefixes) as string).trim(),
          location,
          xpath,
          constraint,
          selected,
        };
        if (value !== undefined) summary.value = value;
        return summary;
      },
    );
    const start = (doc.eval('string(//arp:AllocationTimeConstraint/arp:StartTime)', prefixes) as string).trim();
    const end = (doc.eval('string(//arp:AllocationTimeConstraint/arp:EndTime)', prefixes) as string).trim();
    return { name, id, items, ...(start && end ? { window: { start, end } } : {}), xml };
  });
}

function firstValue(nodes: unknown[]): string | undefined {
  if (nodes.length !== 1) return undefined;
  const node = nodes[0];
  if (node instanceof XmlAttribute) return node.value;
  if (node instanceof XmlElement) {
    for (let c = node.firstChild; c; c = c.next) if (c instanceof XmlElement) return undefined;
    return node.content.trim();
  }
  return undefined;
}

/** The constraint in one short phrase: `minInclusive=1 maxInclusive=64`, `one of Legacy|Standard`, `sequence`. */
export function describeConstraint(constraint: ItemSummary['constraint']): string {
  const enumeration = constraint.filter((c) => c.facet === 'enumeration').map((c) => c.value ?? '');
  const parts = constraint
    .filter((c) => c.facet !== 'enumeration')
    .map((c) => (c.value === undefined ? c.facet : `${c.facet}=${c.value}`));
  if (enumeration.length) parts.unshift(`one of ${enumeration.join('|')}`);
  return parts.join(' ');
}
