import type { XmlElement } from 'libxml2-wasm';
import type { AcceptanceNotifier } from '../engine/ports.js';
import { OutboundPolicy } from './outbound.js';
import { c14n } from '../xml/item-constraint.js';
import { withXml } from '../xml/libxml.js';
import { ns, prefixes } from '../xml/namespaces.js';

/**
 * Tells an initiator that its pending agreement was accepted or rejected by calling
 * Accept or Reject on the AgreementAcceptance EPR it gave (WS-Agreement section 8.2):
 * the EPR's reference parameters travel as SOAP headers, as WS-Addressing requires.
 */
export class SoapAcceptanceNotifier implements AcceptanceNotifier {
  constructor(
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = 10_000,
    private readonly outbound = new OutboundPolicy(),
  ) {}

  async notify(acceptanceEpr: string, decision: 'Accept' | 'Reject', agreementId: string): Promise<void> {
    const { address, parameters } = withXml(acceptanceEpr, 'AgreementAcceptanceEPR', (doc) => ({
      address: (doc.eval('string(wsa:Address)', prefixes) as string).trim(),
      parameters: (doc.find('wsa:ReferenceParameters/*', prefixes) as XmlElement[]).map((p) =>
        markAsReferenceParameter(c14n(p)),
      ),
    }));
    if (!/^https?:\/\//.test(address))
      throw new Error(`AgreementAcceptanceEPR address "${address}" is not an http(s) URL`);
    await this.outbound.check(address, 'the AgreementAcceptanceEPR address');
    const action = `${ns.wsag}/AgreementAcceptance/${decision}Request`;
    const envelope =
      `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${ns.soap11}" xmlns:wsa="${ns.wsa}">` +
      `<soap:Header><wsa:To>${address.replace(/[<&]/g, '')}</wsa:To><wsa:Action>${action}</wsa:Action>` +
      `${parameters.join('')}</soap:Header>` +
      `<soap:Body><wsag:${decision}AgreementInput xmlns:wsag="${ns.wsag}" xmlns:srv="${ns.srv}">` +
      `<srv:AgreementId>${agreementId.replace(/[<&]/g, '')}</srv:AgreementId></wsag:${decision}AgreementInput>` +
      `</soap:Body>` +
      '</soap:Envelope>';
    const response = await this.fetchImpl(address, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` },
      body: envelope,
      signal: AbortSignal.timeout(this.timeoutMs),
      redirect: 'manual', // not followed: the next address would not have been checked
    });
    if (!response.ok) throw new Error(`${address} answered ${decision} with HTTP ${response.status}`);
  }
}

/** Adds wsa:IsReferenceParameter="true" to a reference parameter's start tag. */
function markAsReferenceParameter(xml: string): string {
  const startTag = /^<[^>]*>/.exec(xml)?.[0] ?? '';
  const declare = startTag.includes(`xmlns:wsa="${ns.wsa}"`) ? '' : ` xmlns:wsa="${ns.wsa}"`;
  return xml.replace(/^<([^\s>/]+)/, `<$1${declare} wsa:IsReferenceParameter="true"`);
}
