import { prefixes } from './namespaces.js';

const prefixOf = new Map(Object.entries(prefixes).map(([prefix, uri]) => [uri, prefix]));

/** `{uri}local` as `prefix:local` where the namespace is one of ours. */
function qualified(name: string): string {
  return name.replace(/\{([^}]*)\}([\w.-]+)/g, (whole, uri: string, local: string) => {
    const prefix = prefixOf.get(uri);
    return prefix ? `${prefix}:${local}` : whole;
  });
}

/** What a value of an XML Schema type looks like, in words. */
function typeInWords(type: string): string {
  const local = qualified(type).replace(/^xs:/, '');
  if (/^(double|float|decimal)$/.test(local)) return 'a number';
  if (/(integer|Integer|int|long|short|byte)$/.test(local) || /CountType$/.test(local)) return 'a whole number';
  if (/MoneyType$/.test(local)) return 'an amount such as 12.50';
  if (local === 'dateTime') return 'a date and time such as 2026-11-29T14:00:00Z';
  if (local === 'date') return 'a date such as 2026-11-29';
  if (local === 'duration') return 'a duration such as PT2H';
  if (local === 'boolean') return 'true or false';
  return `a valid ${local}`;
}

const boundFacet = new RegExp(
  /^\[facet '(min|max)(In|Ex)clusive'\] The value '(.*)' is (?:less|greater) than /.source +
    /(?:or equal to )?the (?:minimum|maximum) value allowed \('(.*)'\)$/.source,
  's',
);

/**
 * One libxml2 schema message in plain words, with namespace prefixes instead of URLs:
 * "jsdl:Exact 'abc' is not a number", "sla:GuaranteeLevel 'Gold' is not one of Background,
 * Legacy, ...", "sla:NodesAvailable 0 is less than 1, the least allowed". A message of
 * another shape keeps its words, its names prefixed.
 */
export function plainSchemaMessage(raw: string): string {
  const text = raw.trim().replace(/\.$/, '');
  const element = /^(?:line \d+: )?Element '([^']+)'(?:, attribute '([^']+)')?: (.*)$/s.exec(text);
  if (!element) return qualified(text);
  const [, elementName, attribute, rest] = element as unknown as [string, string, string | undefined, string];
  const subject = attribute ? `${qualified(elementName)}/@${qualified(attribute)}` : qualified(elementName);
  const atomic = /^'(.*)' is not a valid value of the (?:atomic|list|union) type '([^']+)'$/s.exec(rest);
  if (atomic) return `${subject} '${atomic[1]}' is not ${typeInWords(atomic[2] as string)}`;
  const enumeration = /^\[facet 'enumeration'\] The value '(.*)' is not an element of the set \{(.*)\}$/s.exec(rest);
  if (enumeration)
    return `${subject} '${enumeration[1]}' is not one of ${(enumeration[2] as string).replace(/'/g, '')}`;
  const bound = boundFacet.exec(rest);
  if (bound) {
    const [, side, inclusive, value, limit] = bound as unknown as [string, string, string, string, string];
    if (side === 'min')
      return (
        `${subject} ${value} is ${inclusive === 'In' ? 'less than' : 'not more than'} ${limit}, ` +
        `${inclusive === 'In' ? 'the least allowed' : 'which it must exceed'}`
      );
    return (
      `${subject} ${value} is ${inclusive === 'In' ? 'more than' : 'not less than'} ${limit}, ` +
      `${inclusive === 'In' ? 'the most allowed' : 'which it must stay below'}`
    );
  }
  return `${subject}: ${qualified(rest)}`;
}

/**
 * A creation constraint's verdict in plain words: "Item NodeCount: 65 is more than 64, the
 * most allowed" for "Item 'NodeCount' at /wsag:...: value "65" violates facet
 * maxInclusive: ..."; a verdict of another shape as it is.
 */
export function plainConstraintMessage(verdict: string): string {
  const item = /^Item '([^']+)' at .*?: value "(.*)" violates facet (\w+): (.*)$/s.exec(verdict);
  if (!item) return verdict;
  const [, name, value, facet, detail] = item as unknown as [string, string, string, string, string];
  const plain = plainSchemaMessage(`Element 'v': [facet '${facet}'] ${detail}`).replace(/^v:? /, '');
  return (
    `Item ${name}: ` +
    `${plain.startsWith(`${value} `) || plain.startsWith(`'${value}'`) ? plain : `'${value}' ${plain}`}`
  );
}
