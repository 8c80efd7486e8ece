import { plainSchemaMessage } from '../xml/plain-schema-message.js';

/**
 * A fault's text as the CLI prints it: schema messages in plain words with namespace
 * prefixes instead of URLs (WSAG_DEBUG=1 prints the server's text as well).
 */
export function plainFaultText(message: string): string {
  const schema = /^(SchemaViolation: .*? violates the schema: )(.*)$/s.exec(message);
  if (schema) return `${schema[1]}${(schema[2] as string).split(/; (?=line \d+: )/).map(plainSchemaMessage).join('; ')}`;
  const item = /^CreationConstraintViolation: Item '([^']+)' at .*?: value "(.*)" violates facet (\w+): (.*)$/s.exec(message);
  if (item) {
    const [, name, value, facet, detail] = item as unknown as [string, string, string, string, string];
    const plain = plainSchemaMessage(`Element 'v': [facet '${facet}'] ${detail}`).replace(/^v:? /, '');
    return `CreationConstraintViolation: Item ${name}: ${plain.startsWith(`${value} `) || plain.startsWith(`'${value}'`) ? plain : `'${value}' ${plain}`}`;
  }
  return message;
}
