import { XmlElement, XmlAttribute, type XmlNode, type XsdValidator } from 'libxml2-wasm';
import { canonicalXml, standaloneSource } from './canonical.js';
import { MalformedMessage } from '../domain/errors.js';
import { namespacesNamed } from './constraint-namespaces.js';
import { compileSchema, describeValidationError } from './schema-set.js';
import { parseXml } from './libxml.js';
import { escapeXml } from './escape.js';
import { ns, schemaFiles } from './namespaces.js';

/**
 * An Item's ItemConstraint (WS-Agreement section 9.2.1) is an XSD fragment: either a
 * simple-type restriction (facets, optionally a simpleType) on the selected value, or a
 * content model particle (sequence, choice, all, group) on the selected element. Each is
 * compiled once, with libxml2, into a small schema that imports ours, so facets mean
 * exactly what XSD says they mean.
 */
export interface ItemConstraintCheck {
  /** undefined when the node satisfies the constraint, else what failed (names the facet where one did). */
  violation(node: XmlNode): string | undefined;
}

const facetNames = new Set([
  'enumeration',
  'pattern',
  'minInclusive',
  'maxInclusive',
  'minExclusive',
  'maxExclusive',
  'length',
  'minLength',
  'maxLength',
  'totalDigits',
  'fractionDigits',
  'whiteSpace',
]);
const particleNames = new Set(['sequence', 'choice', 'all', 'group']);
const itemNs = 'urn:wsag-server:item-constraint';
/** Verdicts a constraint keeps, per constraint. */
const remembered = 256;
/** Longer values, and longer instances of a content model, are checked every time, not remembered. */
const rememberedValueChars = 256;
const rememberedInstanceChars = 2048;
const subjectName = 'ItemConstraintSubject';

export function compileItemConstraint(constraint: XmlElement): ItemConstraintCheck {
  const children = elementChildren(constraint);
  const foreign = children.find((c) => c.namespaceUri !== ns.xs);
  if (foreign)
    throw new Error(`ItemConstraint may hold only XML Schema elements, found {${foreign.namespaceUri}}${foreign.name}`);
  if (children.length === 0) return { violation: () => undefined };
  const kinds = new Set(
    children.map((c) =>
      facetNames.has(c.name)
        ? 'facet'
        : c.name === 'simpleType'
          ? 'simpleType'
          : particleNames.has(c.name)
            ? 'particle'
            : c.name,
    ),
  );
  if (kinds.has('particle')) {
    if (children.length !== 1)
      throw new Error(
        'ItemConstraint with a content model must hold exactly one xs:sequence, xs:choice, xs:all or xs:group',
      );
    return particleCheck(children[0] as XmlElement);
  }
  const unknown = [...kinds].find((k) => k !== 'facet' && k !== 'simpleType');
  if (unknown)
    throw new Error(`ItemConstraint holds xs:${unknown}, which is neither a facet, xs:simpleType nor a content model`);
  return simpleCheck(children);
}

function simpleCheck(children: XmlElement[]): ItemConstraintCheck {
  const simpleType = children.find((c) => c.name === 'simpleType');
  const facets = children.filter((c) => c.name !== 'simpleType');
  const base = simpleType ? '' : ` base="xs:${inferBaseType(facets)}"`;
  const restriction =
    `<xs:restriction${base}>${simpleType ? c14n(simpleType) : ''}` + `${facets.map(c14n).join('')}</xs:restriction>`;
  const schema = new ConstraintSchema(
    itemNs,
    `<xs:element name="Value"><xs:simpleType>${restriction}</xs:simpleType></xs:element>`,
    namespacesNamed(children),
  );
  const verdict = (value: string): string | undefined => {
    const problem = schema.problem(`<v:Value xmlns:v="${itemNs}">${escapeXml(value)}</v:Value>`);
    if (!problem) return undefined;
    const facet = /\[facet '(\w+)'\]/.exec(problem)?.[1];
    const detail = problem.replace(/^line \d+: Element '[^']*':\s*/, '').replace(/^\[facet '\w+'\]\s*/, '');
    return facet ? `value "${value}" violates facet ${facet}: ${detail}` : `value "${value}" is not valid: ${detail}`;
  };
  // The verdict depends on the value alone, and offers repeat a few values (node counts, service levels).
  const remembering = rememberedVerdicts(rememberedValueChars);
  return {
    violation(node) {
      const value = node instanceof XmlAttribute ? node.value : node.content;
      return remembering(value, () => verdict(value));
    },
  };
}

/**
 * A constraint's verdicts by the text they depend on alone: one seen lately is answered
 * without a document to parse and validate. Bounded: at most `remembered` (cleared when
 * full), none for a text longer than `longest`.
 */
function rememberedVerdicts(longest: number): (text: string, verdict: () => string | undefined) => string | undefined {
  const seen = new Map<string, string | null>();
  return (text, verdict) => {
    const known = seen.get(text);
    if (known !== undefined) return known ?? undefined;
    const problem = verdict();
    if (seen.size >= remembered) seen.clear();
    if (text.length <= longest) seen.set(text, problem ?? null);
    return problem;
  };
}

function particleCheck(particle: XmlElement): ItemConstraintCheck {
  // Compiled per target namespace: the subject element must live in the namespace of the selected element.
  // A wildcard Location could select elements of any namespace: the cache is bounded.
  const byNamespace = new Map<string, ConstraintSchema>();
  const particleXml = c14n(particle);
  const named = namespacesNamed([particle]);
  const compile = (target: string): ConstraintSchema =>
    new ConstraintSchema(
      target,
      `<xs:element name="${subjectName}"><xs:complexType>${particleXml}<xs:anyAttribute ` +
        `processContents="skip"/></xs:complexType></xs:element>`,
      named,
    );
  byNamespace.set('', compile('')); // compiled at load, so a broken constraint fails the template, not a client's offer
  // As for values: the verdict depends on the instance's text alone (written out on its own, it
  // names its namespaces), and offers repeat a few elements (a node count, a time window).
  const remembering = rememberedVerdicts(rememberedInstanceChars);
  const validateIn = (target: string, instance: string): string | undefined => {
    const cached = byNamespace.get(target);
    const schema = cached ?? compile(target);
    try {
      return schema.problem(instance);
    } finally {
      if (!cached && byNamespace.size < 16) byNamespace.set(target, schema);
      else if (!cached) schema.dispose();
    }
  };
  return {
    violation(node) {
      if (!(node instanceof XmlElement))
        return `selects a ${node.constructor.name}, but a content model constrains elements`;
      // Written out on its own (not canonical): the text is only parsed again, as the instance validated.
      const serialized = standaloneSource(node);
      const qname = node.prefix ? `${node.prefix}:${node.name}` : node.name;
      const renamedQName = node.prefix ? `${node.prefix}:${subjectName}` : subjectName;
      let instance = `<${renamedQName}${serialized.slice(qname.length + 1)}`;
      const closing = `</${qname}>`;
      if (instance.endsWith(closing)) instance = `${instance.slice(0, -closing.length)}</${renamedQName}>`;
      const problem = remembering(instance, () => validateIn(node.namespaceUri, instance));
      return (
        problem &&
        `content of ${qname} does not match the constraint: ` +
          `${problem.replace(/^line \d+: /, '').replace(new RegExp(subjectName, 'g'), node.name)}`
      );
    },
  };
}

/**
 * A constraint's small schema, in two builds: one that imports only the namespaces the
 * constraint names (see namespacesNamed), checked first, and one with every schema of the
 * server, built when the first rejects something. The first can only reject more: a
 * component it lacks (an element substituting a named one, an xsi:type from elsewhere)
 * fails there, never passes; so its passes stand, and its rejections are the full
 * schema's to confirm, which keeps the verdicts those of the full schema alone.
 */
class ConstraintSchema {
  private readonly named: XsdValidator;
  private every: XsdValidator | undefined;

  constructor(
    private readonly targetNamespace: string,
    private readonly body: string,
    namespaces: Set<string> | 'every',
  ) {
    this.named = compileSchema(schemaShell(targetNamespace, body, namespaces), 'item-constraint.xsd');
    if (namespaces === 'every') this.every = this.named;
  }

  /** undefined when `instance` is valid, else what the full schema says is wrong. */
  problem(instance: string): string | undefined {
    if (validate(this.named, instance) === undefined) return undefined;
    this.every ??= compileSchema(schemaShell(this.targetNamespace, this.body, 'every'), 'item-constraint.xsd');
    return validate(this.every, instance);
  }

  dispose(): void {
    this.named.dispose();
    if (this.every !== this.named) this.every?.dispose();
  }
}

/** Our schema files by namespace, with XML Schema's own for the xml: namespace (xml:lang, xml:space). */
const importable: Record<string, string> = { ...schemaFiles, 'http://www.w3.org/XML/1998/namespace': 'xml.xsd' };

/**
 * A schema in `targetNamespace` that includes our schema for that namespace and imports the other `namespaces` (those
 * we have a schema for).
 */
function schemaShell(targetNamespace: string, body: string, namespaces: Set<string> | 'every'): string {
  const wanted = (uri: string) => namespaces === 'every' || namespaces.has(uri);
  const imports = Object.entries(importable)
    .filter(([uri]) => uri !== targetNamespace && wanted(uri))
    .map(([uri, file]) => `<xs:import namespace="${uri}" schemaLocation="${file}"/>`)
    .join('');
  const own = wanted(targetNamespace) ? schemaFiles[targetNamespace] : undefined;
  const include = own ? `<xs:include schemaLocation="${own}"/>` : '';
  const tns = targetNamespace ? ` targetNamespace="${escapeXml(targetNamespace)}"` : '';
  return `<xs:schema xmlns:xs="${ns.xs}"${tns} elementFormDefault="qualified">${include}${imports}${body}</xs:schema>`;
}

/** Facets alone do not say the value's type; their own values do (numbers, dates, durations). */
function inferBaseType(facets: XmlElement[]): string {
  const ordering = facets
    .filter((f) => /^(min|max)(In|Ex)clusive$/.test(f.name))
    .map((f) => f.attr('value')?.value ?? '');
  if (facets.some((f) => f.name === 'totalDigits' || f.name === 'fractionDigits')) return 'decimal';
  if (ordering.length === 0) return 'string';
  if (ordering.every((v) => /^[+-]?(\d+\.?\d*|\.\d+)$/.test(v.trim()))) return 'decimal';
  if (ordering.every((v) => /^-?\d{4,}-\d\d-\d\dT/.test(v.trim()))) return 'dateTime';
  if (ordering.every((v) => /^-?\d{4,}-\d\d-\d\d/.test(v.trim()))) return 'date';
  if (ordering.every((v) => /^-?P/.test(v.trim()))) return 'duration';
  throw new Error(`cannot tell the type of the bounds ${ordering.join(', ')}: add an xs:simpleType naming its base`);
}

function validate(validator: XsdValidator, instance: string): string | undefined {
  const doc = parseXml(instance, 'value');
  try {
    validator.validate(doc);
    return undefined;
  } catch (error) {
    return describeValidationError(error)[0] ?? 'invalid';
  } finally {
    doc.dispose();
  }
}

export function elementChildren(element: XmlElement): XmlElement[] {
  const result: XmlElement[] = [];
  for (let c = element.firstChild; c; c = c.next) if (c instanceof XmlElement) result.push(c);
  return result;
}

/** Inclusive C14N keeps every in-scope namespace declaration, so QNames in attribute values still resolve. */
export function c14n(node: XmlNode): string {
  try {
    return canonicalXml(node, 'inclusive');
  } catch {
    // libxml2 refuses relative namespace names (deprecated by Namespaces in XML, section 2.2), the one thing a parsed
    // document can still hold that C14N cannot write.
    throw new MalformedMessage(
      'the message cannot be written as canonical XML: every namespace name (xmlns) must be an absolute URI',
    );
  }
}
