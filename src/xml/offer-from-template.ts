import { XmlAttribute, XmlElement, XmlText, type XmlNode } from 'libxml2-wasm';
import { c14n } from './item-constraint.js';
import { withXml } from './libxml.js';
import { compileLocation, selectNodes } from './location.js';
import { prefixes } from './namespaces.js';

/** One `--set location=value`: `location` is an Item name of the template or an XPath over the offer. */
export interface OfferSetting {
  location: string;
  value: string;
}

/**
 * Turns a template into an offer (WS-Agreement section 9: an offer is a template without
 * its creation constraints): the root becomes wsag:AgreementOffer, the TemplateId
 * attribute and CreationConstraints go, and each setting replaces the value at its location.
 */
export function offerFromTemplate(templateXml: string, settings: OfferSetting[] = []): string {
  return withXml(templateXml, 'template', (doc) => {
    const root = doc.root;
    const items = new Map<string, string>();
    for (const item of doc.find('/wsag:Template/wsag:CreationConstraints/wsag:Item', prefixes) as XmlElement[]) {
      const name = (item.eval('string(@wsag:Name)', prefixes) as string).trim();
      const location = item.get('wsag:Location', prefixes) as XmlElement | null;
      if (name && location) items.set(name, location.content.trim());
    }
    for (const setting of settings) {
      const { xpath, nodes } = selectInTemplate(root, items.get(setting.location) ?? setting.location);
      if (nodes.length === 0)
        throw new Error(`--set ${setting.location}: the location selects nothing in the template (${xpath})`);
      for (const node of nodes) setValue(node, setting.value, setting.location);
    }
    (doc.get('/wsag:Template/wsag:CreationConstraints', prefixes) as XmlElement | null)?.remove();
    (root.attrs.find((a) => a.name === 'TemplateId') as XmlAttribute | undefined)?.remove();
    const xml = c14n(root);
    const qname = root.prefix ? `${root.prefix}:Template` : 'Template';
    const renamed = root.prefix ? `${root.prefix}:AgreementOffer` : 'AgreementOffer';
    return `<${renamed}${xml.slice(qname.length + 1, -(qname.length + 3))}</${renamed}>`;
  });
}

/**
 * What an offer Location selects in the template itself: Locations are written against
 * the offer (root wsag:AgreementOffer), the template's root is wsag:Template.
 * Returns the Location as plain XPath (over the offer) and the selected template nodes.
 */
export function selectInTemplate(root: XmlElement, locationText: string): { xpath: string; nodes: XmlNode[] } {
  const location = compileLocation(locationText, { ...prefixes, ...root.namespaces });
  // Every branch of a union (a Location may select several values that go together).
  const xpath = location.xpath.replace(/(^|\|\s*)\/([\w.-]+:)?AgreementOffer\b/g, '$1/$2Template');
  return { xpath: location.xpath, nodes: selectNodes({ xpath, namespaces: location.namespaces }, root) };
}

function setValue(node: unknown, value: string, label: string): void {
  if (node instanceof XmlAttribute) {
    node.value = value;
    return;
  }
  if (node instanceof XmlElement) {
    let text: XmlText | undefined;
    for (let c = node.firstChild; c; c = c.next) {
      if (c instanceof XmlElement)
        throw new Error(`--set ${label}: the location selects an element with child elements; point it at a value`);
      if (c instanceof XmlText) text = c;
    }
    if (text) text.content = value;
    else node.addText(value);
    return;
  }
  throw new Error(`--set ${label}: the location must select an element or an attribute`);
}
