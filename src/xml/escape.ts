/**
 * Characters XML 1.0 does not allow, and lone UTF-16 surrogates: shown as \uXXXX so every emitted document stays
 * well-formed.
 */
const notXml = new RegExp(
  [
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.source,
    /[\ud800-\udbff](?![\udc00-\udfff])/.source, // a high surrogate alone
    /(?<![\ud800-\udbff])[\udc00-\udfff]/.source, // a low surrogate alone
  ].join('|'),
  'g',
);
const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Escapes text for element content and attribute values. */
export function escapeXml(text: string): string {
  return text
    .replace(/[&<>"']/g, (c) => entities[c] ?? c)
    .replace(notXml, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
