import fs from 'node:fs';
import path from 'node:path';
import type { SoapVersion } from './envelope.js';

/** Placeholder in wsdl/*.wsdl replaced by the public base URL when served. */
export const addressPlaceholder = 'http://localhost:8080';

/**
 * Which bindings a served WSDL holds: both (the default), or one SOAP version only. A
 * SOAP 1.1-only stack (Axis 1.x, the Globus Toolkit 4 generation) stops on a soap12:fault it
 * does not know, and some generators pick the SOAP 1.2 port of a combined document.
 */
export type WsdlView = 'both' | SoapVersion;

/** The view a `soap` query parameter asks for, or a message naming what is accepted. */
export function wsdlViewOf(soap: unknown): WsdlView | { problem: string } {
  if (soap === undefined) return 'both';
  if (soap === '1.1' || soap === '1.2') return soap;
  return {
    problem:
      `soap=${String(soap).slice(0, 20)} is not a SOAP version this server describes: ask for ?wsdl (both ` +
      'bindings), ?wsdl&soap=1.1 or ?wsdl&soap=1.2',
  };
}

const texts = new Map<string, string>();

/** The WSDL file as served: the view's bindings and ports only, its addresses at `baseUrl`. */
export function servedWsdl(wsdlDir: string, file: string, view: WsdlView, baseUrl: string): string {
  let text = texts.get(file);
  if (text === undefined) {
    text = fs.readFileSync(path.join(wsdlDir, file), 'utf8');
    texts.set(file, text);
  }
  return withoutOtherVersion(text, view).split(addressPlaceholder).join(baseUrl);
}

/**
 * Leaves out the binding and the port of the other SOAP version. The files in wsdl/ name
 * them `<PortType>Soap11Binding`/`Soap12Binding` and `...Soap11Port`/`Soap12Port` (a test of
 * wsdl/ holds them to it), so the blocks are found by name.
 */
export function withoutOtherVersion(text: string, view: WsdlView): string {
  if (view === 'both') return text;
  const other = view === '1.1' ? 'Soap12' : 'Soap11';
  return text
    .replace(new RegExp(`\\n *<wsdl:binding name="\\w+${other}Binding"[\\s\\S]*?</wsdl:binding>\\n`, 'g'), '')
    .replace(new RegExp(`\\n *<wsdl:port name="\\w+${other}Port"[\\s\\S]*?</wsdl:port>`, 'g'), '');
}
