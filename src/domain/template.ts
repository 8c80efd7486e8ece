/**
 * An agreement template: the offer skeleton a client fills in, plus creation constraints
 * (WS-Agreement section 9). The XML of each Item's constraint stays XML: it is an XSD
 * fragment, checked by src/xml.
 */
export interface TemplateItem {
  name: string;
  /** The Location as written (plain XPath 1.0 or the `declare namespace ...;$this/...` form). */
  location: string;
}

export interface AgreementTemplate {
  id: string;
  name: string;
  /** Short description for listings. */
  description?: string;
  items: TemplateItem[];
  /** Number of wsag:Constraint elements. */
  constraintCount: number;
}
