import fs from 'node:fs';
import path from 'node:path';
import { type XmlElement, XmlXPath, type XmlDocument } from 'libxml2-wasm';
import { CreationConstraintViolation } from '../domain/errors.js';
import { plainConstraintMessage } from './plain-schema-message.js';
import type { AgreementTemplate } from '../domain/template.js';
import type { ReceivedOffer, TemplateCatalog } from '../engine/ports.js';
import { movedIntoOwnDocument } from './canonical.js';
import { c14n, compileItemConstraint, elementChildren, type ItemConstraintCheck } from './item-constraint.js';
import { parseXml, withXml } from './libxml.js';
import { compileLocation, evaluateLocation, selectNodes, type CompiledLocation } from './location.js';
import { prefixes } from './namespaces.js';
import { XmlReceivedOffer } from './offer-reader.js';
import { SchemaSet } from './schema-set.js';

/** A template file that cannot be served, with the file and the part at fault. */
export class TemplateError extends Error {}

/** A template document and where it came from (a file name), as the library was given it. */
export interface TemplateSource {
  source: string;
  origin: string;
}

interface CompiledItem {
  name: string;
  location: CompiledLocation;
  locationText: string;
  check: ItemConstraintCheck;
}

interface CompiledConstraint {
  label: string;
  expression: CompiledLocation;
}

interface LoadedTemplate {
  template: AgreementTemplate;
  /** Template XML (canonical) with `${now...}` tokens left in place; rendered per request. */
  source: string;
  /** Where it came from (a file name), for messages. */
  origin: string;
  items: CompiledItem[];
  constraints: CompiledConstraint[];
}

/** `${now}` or `${now+P1DT2H}`: a time relative to when the template is served, so its defaults never go stale. */
const timeToken = /\$\{now(?:\+(P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+S)?)?))?\}/g;

/**
 * The templates the factory offers (WS-Agreement section 9), loaded from XML files at
 * start-up. Every Item and Constraint is compiled then, so a broken template stops the
 * server with a message naming the file and the Item instead of failing a client later.
 */
export class TemplateLibrary implements TemplateCatalog {
  private readonly templates: LoadedTemplate[] = [];

  static fromDirectory(dir: string): TemplateLibrary {
    if (!fs.existsSync(dir)) throw new TemplateError(`template directory ${dir} does not exist`);
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.xml'))
      .sort();
    return TemplateLibrary.fromFiles(files.map((f) => path.join(dir, f)));
  }

  static fromFiles(files: string[]): TemplateLibrary {
    return TemplateLibrary.fromSources(
      files.map((file) => ({ source: fs.readFileSync(file, 'utf8'), origin: path.basename(file) })),
    );
  }

  /** A library of these template documents (another thread's copy of `sources()`). */
  static fromSources(sources: readonly TemplateSource[]): TemplateLibrary {
    const library = new TemplateLibrary();
    for (const { source, origin } of sources) library.add(source, origin);
    return library;
  }

  /** The templates as plain data (their canonical documents), from which `fromSources` makes the same library. */
  sources(): TemplateSource[] {
    return this.templates.map(({ source, origin }) => ({ source, origin }));
  }

  add(source: string, origin: string): AgreementTemplate {
    const loaded = load(source, origin);
    const clash = this.templates.find(
      (t) => t.template.id === loaded.template.id || t.template.name === loaded.template.name,
    );
    if (clash)
      throw new TemplateError(
        `${origin}: TemplateId "${loaded.template.id}" or Name "${loaded.template.name}" is already used by ` +
          `another template`,
      );
    this.templates.push(loaded);
    return loaded.template;
  }

  list(): AgreementTemplate[] {
    return this.templates.map((t) => t.template);
  }

  find(ref: { id?: string; name?: string }): AgreementTemplate | undefined {
    return this.templates.find(
      (t) =>
        (ref.id === undefined || t.template.id === ref.id) && (ref.name === undefined || t.template.name === ref.name),
    )?.template;
  }

  /** The template documents as served at `now`: time tokens replaced by dates relative to now. */
  render(now: Date): string[] {
    return this.templates.map((t) => renderTimeTokens(t.source, now));
  }

  /** One template's document as served at `now`. */
  renderOne(template: AgreementTemplate, now: Date): string {
    const loaded = this.templates.find((t) => t.template === template);
    if (!loaded) throw new Error(`template "${template.name}" is not in this library`);
    return renderTimeTokens(loaded.source, now);
  }

  checkCreationConstraints(template: AgreementTemplate, offer: ReceivedOffer): void {
    const loaded = this.loaded(template);
    if (!(offer instanceof XmlReceivedOffer)) throw new Error('creation constraints need the offer as XML');
    const verdict = offer.checkedVerdict(template.id);
    if (verdict === null) return;
    if (verdict !== undefined) throw constraintViolation(verdict);
    withXml(offer.offerSource, 'offer', (doc) => checkIn(loaded, doc));
  }

  /** The creation constraints of `template` checked on `doc`, an offer document (its root a wsag:AgreementOffer). */
  checkCreationConstraintsIn(template: AgreementTemplate, doc: XmlDocument): void {
    checkIn(this.loaded(template), doc);
  }

  private loaded(template: AgreementTemplate): LoadedTemplate {
    const loaded = this.templates.find((t) => t.template === template);
    if (!loaded) throw new Error(`template ${template.id} is not in this library`);
    return loaded;
  }
}

/** The verdict in plain words, its technical text kept for the fault's detail. */
function constraintViolation(verdict: string): CreationConstraintViolation {
  const plain = plainConstraintMessage(verdict);
  return new CreationConstraintViolation(plain, plain === verdict ? undefined : verdict);
}

function checkIn(loaded: LoadedTemplate, doc: XmlDocument): void {
  for (const item of loaded.items) {
    for (const node of selectNodes(item.location, doc.root)) {
      const problem = item.check.violation(node);
      if (problem) {
        throw constraintViolation(`Item '${item.name}' at ${item.locationText}: ${problem}`);
      }
    }
  }
  for (const constraint of loaded.constraints) {
    if (!truthy(evaluateLocation(constraint.expression, doc))) {
      throw new CreationConstraintViolation(
        `Constraint ${constraint.label} is not met: ${constraint.expression.xpath}`,
      );
    }
  }
}

/**
 * `offer` with the creation constraints of the template it names checked for each of its
 * alternatives, so the thread that takes it over need not parse it again (a document
 * thread reads and checks, the event loop uses the verdicts). Unchanged when it names no
 * template of `library` or a check fails other than by a violation: then it is checked where used.
 */
export function withConstraintsChecked(
  library: TemplateLibrary,
  offer: XmlReceivedOffer,
  element?: XmlElement,
): XmlReceivedOffer {
  if (offer.templateId === undefined && offer.templateName === undefined) return offer;
  const template = library.find({ id: offer.templateId, name: offer.templateName });
  if (!template) return offer;
  const alternatives = offer.alternatives();
  // An offer without choices, read from `element`, is checked on that element moved into a
  // document of its own rather than on its standalone copy parsed again (a CreateAgreement
  // offer's read 6 % faster; git history of docs/benchmarks.md).
  const doc =
    element && alternatives.length === 1 && alternatives[0] === offer ? movedIntoOwnDocument(element) : undefined;
  const verdicts: Array<string | null> = [];
  try {
    for (const alternative of alternatives) {
      try {
        if (doc) library.checkCreationConstraintsIn(template, doc);
        else library.checkCreationConstraints(template, alternative);
        verdicts.push(null);
      } catch (error) {
        if (!(error instanceof CreationConstraintViolation)) return offer;
        verdicts.push(error.technicalDetail ?? error.message);
      }
    }
  } finally {
    doc?.dispose();
  }
  return offer.withChecked({ templateId: template.id, verdicts });
}

export function renderTimeTokens(source: string, now: Date): string {
  // Rounded up to the next full minute so templates served within a minute are identical.
  const base = Math.ceil(now.getTime() / 60_000) * 60_000;
  return source.replace(timeToken, (_m, duration: string | undefined) =>
    new Date(base + (duration ? durationMs(duration) : 0)).toISOString().replace('.000Z', 'Z'),
  );
}

function durationMs(duration: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(duration);
  const [d, h, min, s] = (m ?? []).slice(1).map((v) => Number(v ?? 0));
  return ((((d ?? 0) * 24 + (h ?? 0)) * 60 + (min ?? 0)) * 60 + (s ?? 0)) * 1000;
}

function load(file: string, origin: string): LoadedTemplate {
  // Served as canonical XML of the root element: no XML declaration, no comments.
  const source = withXml(file, `template ${origin}`, (raw) => c14n(raw.root));
  const doc = parseXml(renderTimeTokens(source, new Date(0)), `template ${origin}`);
  try {
    const root = doc.root;
    if (root.namespaceUri !== prefixes.wsag || root.name !== 'Template') {
      throw new TemplateError(
        `${origin}: the root element must be wsag:Template, found {${root.namespaceUri}}${root.name}`,
      );
    }
    try {
      SchemaSet.get().validate(doc, `template ${origin}`);
    } catch (error) {
      throw new TemplateError((error as Error).message);
    }
    const id = stringOf(doc, 'string(/wsag:Template/@wsag:TemplateId)');
    const name = stringOf(doc, 'string(/wsag:Template/wsag:Name)');
    if (!id || !name)
      throw new TemplateError(`${origin}: a template needs a wsag:TemplateId attribute and a wsag:Name`);
    const constraintSection = doc.get('/wsag:Template/wsag:CreationConstraints', prefixes) as XmlElement | null;
    if (constraintSection && /\$\{now/.test(constraintSection.toString())) {
      throw new TemplateError(`${origin}: time tokens are not allowed inside CreationConstraints`);
    }
    const sectionChildren = constraintSection ? elementChildren(constraintSection) : [];
    const items = sectionChildren.filter((e) => e.name === 'Item').map((e, i) => compileItem(e, i, origin));
    const constraints = sectionChildren
      .filter((e) => e.name === 'Constraint')
      .map((e, i) => compileConstraint(e, i, origin));
    const description = stringOf(doc, 'string(/wsag:Template/wsag:Context/*[local-name()="Description"])') || undefined;
    return {
      template: {
        id,
        name,
        description,
        items: items.map((i) => ({ name: i.name, location: i.locationText })),
        constraintCount: constraints.length,
      },
      source,
      origin,
      items,
      constraints,
    };
  } finally {
    doc.dispose();
  }
}

function compileItem(item: XmlElement, index: number, origin: string): CompiledItem {
  const name = stringOf(item, 'string(@wsag:Name)') || `#${index + 1}`;
  const locationEl = item.get('wsag:Location', prefixes) as XmlElement | null;
  const constraintEl = item.get('wsag:ItemConstraint', prefixes) as XmlElement | null;
  if (!locationEl || !constraintEl)
    throw new TemplateError(`${origin}: Item '${name}' needs wsag:Location and wsag:ItemConstraint`);
  const locationText = locationEl.content.trim();
  try {
    const location = compileLocation(locationText, locationEl.namespaces);
    XmlXPath.compile(location.xpath, location.namespaces).dispose();
    return { name, location, locationText: location.xpath, check: compileItemConstraint(constraintEl) };
  } catch (error) {
    throw new TemplateError(`${origin}: Item '${name}' cannot be used: ${describe(error)}`);
  }
}

/**
 * A wsag:Constraint holds an XPath 1.0 expression over the offer that must be true (`declare namespace` prologue
 * allowed).
 */
function compileConstraint(constraint: XmlElement, index: number, origin: string): CompiledConstraint {
  const label = `#${index + 1}`;
  if (elementChildren(constraint).length > 0) {
    throw new TemplateError(
      `${origin}: Constraint ${label} must be an XPath 1.0 boolean expression (text), not elements`,
    );
  }
  try {
    const expression = compileLocation(constraint.content.trim(), constraint.namespaces);
    XmlXPath.compile(expression.xpath, expression.namespaces).dispose();
    return { label, expression };
  } catch (error) {
    throw new TemplateError(`${origin}: Constraint ${label} is not a valid XPath expression: ${describe(error)}`);
  }
}

function stringOf(node: XmlDocument | XmlElement, xpath: string): string {
  const value = node.eval(xpath, prefixes);
  return typeof value === 'string' ? value.trim() : '';
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value.length > 0;
  return value === true;
}

function describe(error: unknown): string {
  const e = error as { message?: string; details?: Array<{ message: string }> };
  return (e.details?.[0]?.message ?? e.message ?? String(error)).trim();
}
