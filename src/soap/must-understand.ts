import type { XmlElement } from 'libxml2-wasm';
import { MustUnderstand } from '../domain/errors.js';
import { ns } from '../xml/namespaces.js';
import { evaluate } from '../xml/xpath.js';
import type { SoapRequest } from './envelope.js';

/**
 * Header blocks this server processes: WS-Addressing, WS-Security, and its own reference parameters (srv:AgreementId
 * ...).
 */
const understood = (h: XmlElement) =>
  h.namespaceUri === ns.wsa || (h.namespaceUri === ns.wsse && h.name === 'Security') || h.namespaceUri === ns.srv;

/** Roles (SOAP 1.2) and actors (SOAP 1.1) that name this server: absent means the ultimate receiver. */
const ourRoles: Record<SoapRequest['version'], ReadonlyArray<string | undefined>> = {
  '1.1': [undefined, 'http://schemas.xmlsoap.org/soap/actor/next'],
  '1.2': [
    undefined,
    'http://www.w3.org/2003/05/soap-envelope/role/next',
    'http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver',
  ],
};

/**
 * SOAP 1.1 section 4.2.3 and SOAP 1.2 part 1 section 5.2.3: a header block addressed to
 * this node and marked mustUnderstand that it does not process fails the whole message
 * with a MustUnderstand fault, before anything is done.
 */
export function checkMustUnderstand(request: SoapRequest): void {
  const envNs = request.version === '1.1' ? ns.soap11 : ns.soap12;
  const roleAttr = request.version === '1.1' ? 'actor' : 'role';
  const notUnderstood = request.headers.filter((h) => {
    const must = attribute(h, envNs, 'mustUnderstand');
    if (must !== '1' && must !== 'true') return false;
    return ourRoles[request.version].includes(attribute(h, envNs, roleAttr)) && !understood(h);
  });
  if (notUnderstood.length === 0) return;
  const names = notUnderstood.map((h) => `{${h.namespaceUri}}${h.name}`).join(', ');
  throw new MustUnderstand(
    `header block ${names} is marked mustUnderstand, and this server does not process it; it processes ` +
      `WS-Addressing, wsse:Security and its own reference parameters`,
    notUnderstood.map((h) => ({ namespaceUri: h.namespaceUri, name: h.name })),
  );
}

/** The attribute's value; the expression (one of four: two versions, two attributes) is compiled once. */
function attribute(e: XmlElement, namespace: string, name: string): string | undefined {
  const found = evaluate(e, `@*[local-name()="${name}" and namespace-uri()="${namespace}"]`);
  return Array.isArray(found) && found[0] ? found[0].content.trim() : undefined;
}
