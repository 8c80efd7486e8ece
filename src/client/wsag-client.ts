import { XmlElement } from 'libxml2-wasm';
import type { AgreementState, GuaranteeTermState, ServiceTermState } from '../domain/agreement.js';
import { escapeXml } from '../xml/escape.js';
import { c14n, elementChildren } from '../xml/item-constraint.js';
import { withXml } from '../xml/libxml.js';
import { ns, prefixes } from '../xml/namespaces.js';

/** A SOAP Fault the server answered with: `code` is the protocol fault code (PROTOCOL.md). */
export class WsagFault extends Error {
  constructor(readonly code: string, readonly description: string, readonly httpStatus: number) {
    super(`${code}: ${description}`);
    this.name = 'WsagFault';
  }
}

export interface AgreementReference {
  address: string;
  agreementId: string;
}

export interface AgreementStatus {
  state: AgreementState;
  serviceTerms: { termName: string; state: ServiceTermState }[];
  guaranteeTerms: { termName: string; state: GuaranteeTermState }[];
}

export interface AgreementSummary {
  id: string;
  name?: string;
  state: AgreementState;
  template: string;
  initiator: string;
  nodes: number;
  start?: string;
  end?: string;
  createdAt: string;
}

const rpw = 'http://docs.oasis-open.org/wsrf/rpw-2';

/** A typed WS-Agreement client over SOAP 1.1 (used by the CLI, by tests, and later by migration to peers). */
export class WsagClient {
  readonly baseUrl: string;

  constructor(baseUrl: string, private readonly fetchImpl: typeof fetch = fetch) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
  }

  /** The factory's templates, as XML documents. */
  async templates(): Promise<string[]> {
    return this.getResourceProperty(`${this.baseUrl}/wsag/AgreementFactory`, 'wsag:Template');
  }

  async createAgreement(offerXml: string): Promise<AgreementReference> {
    const body = `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${offerXml}</wsag:CreateAgreementInput>`;
    const response = await this.call(`${this.baseUrl}/wsag/AgreementFactory`, `${ns.wsag}/AgreementFactory/CreateAgreementRequest`, body);
    return withXml(response, 'response', (doc) => {
      const address = doc.eval('string(//wsag:CreatedAgreementEPR/wsa:Address)', prefixes) as string;
      const agreementId = doc.eval('string(//wsag:CreatedAgreementEPR/wsa:ReferenceParameters/srv:AgreementId)', prefixes) as string;
      if (!agreementId) throw new Error('the server answered CreateAgreement without an agreement id in the EPR');
      return { address: address.trim(), agreementId: agreementId.trim() };
    });
  }

  /** One resource property of an agreement (Name, AgreementId, Context, Terms, AgreementState, ...). */
  async agreementProperty(agreementId: string, property: string, port: 'Agreement' | 'AgreementState' = 'Agreement'): Promise<string[]> {
    return this.getResourceProperty(`${this.baseUrl}/wsag/${port}`, `wsag:${property}`, agreementId);
  }

  async state(agreementId: string): Promise<AgreementStatus> {
    const body = `<rp:GetResourcePropertyDocument xmlns:rp="${ns.wsrfRp}"/>`;
    const response = await this.call(
      `${this.baseUrl}/wsag/AgreementState`,
      `${rpw}/GetResourcePropertyDocument/GetResourcePropertyDocumentRequest`,
      body,
      agreementId,
    );
    return withXml(response, 'response', (doc) => {
      const terms = (local: string) =>
        (doc.find(`//wsag:AgreementStateProperties/wsag:${local}`, prefixes) as XmlElement[]).map((e) => ({
          termName: (e.eval('string(@wsag:termName)', prefixes) as string).trim(),
          state: (e.eval('string(wsag:State)', prefixes) as string).trim(),
        }));
      return {
        state: (doc.eval('string(//wsag:AgreementStateProperties/wsag:AgreementState/wsag:State)', prefixes) as string).trim() as AgreementState,
        serviceTerms: terms('ServiceTermState') as AgreementStatus['serviceTerms'],
        guaranteeTerms: terms('GuaranteeTermState') as AgreementStatus['guaranteeTerms'],
      };
    });
  }

  async terminate(agreementId: string, reason = 'terminated by the initiator'): Promise<void> {
    const body = `<wsag:TerminateInput xmlns:wsag="${ns.wsag}" xmlns:srv="${ns.srv}"><srv:Reason>${escapeXml(reason)}</srv:Reason></wsag:TerminateInput>`;
    await this.call(`${this.baseUrl}/wsag/Agreement`, `${ns.wsag}/Agreement/TerminateRequest`, body, agreementId);
  }

  /** The caller's agreements (JSON listing, not part of WS-Agreement). */
  async agreements(): Promise<AgreementSummary[]> {
    const response = await this.fetchImpl(`${this.baseUrl}/api/agreements`);
    if (!response.ok) throw new Error(`listing agreements failed: HTTP ${response.status}`);
    return (await response.json()) as AgreementSummary[];
  }

  private async getResourceProperty(endpoint: string, qname: string, agreementId?: string): Promise<string[]> {
    const body = `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}">${qname}</rp:GetResourceProperty>`;
    const response = await this.call(endpoint, `${rpw}/GetResourceProperty/GetResourcePropertyRequest`, body, agreementId);
    return withXml(response, 'response', (doc) => {
      const holder = doc.get('//rp:GetResourcePropertyResponse', prefixes) as XmlElement | null;
      return holder ? elementChildren(holder).map(c14n) : [];
    });
  }

  /** Posts one SOAP 1.1 request; returns the response envelope, or throws WsagFault. */
  async call(endpoint: string, action: string, body: string, agreementId?: string): Promise<string> {
    const header = agreementId
      ? `<soap:Header><srv:AgreementId xmlns:srv="${ns.srv}" xmlns:wsa="${ns.wsa}" wsa:IsReferenceParameter="true">${escapeXml(agreementId)}</srv:AgreementId></soap:Header>`
      : '';
    const envelope = `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${ns.soap11}">${header}<soap:Body>${body}</soap:Body></soap:Envelope>`;
    let response: Response;
    try {
      response = await this.fetchImpl(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` },
        body: envelope,
      });
    } catch (error) {
      throw new Error(`cannot reach ${endpoint}: ${(error as Error).cause ? String((error as Error).cause) : (error as Error).message}`);
    }
    const text = await response.text();
    if (response.ok) return text;
    const fault = readFault(text);
    if (fault) throw new WsagFault(fault.code, fault.message, response.status);
    throw new Error(`${endpoint} answered HTTP ${response.status} without a SOAP Fault`);
  }
}

function readFault(text: string): { code: string; message: string } | undefined {
  try {
    return withXml(text, 'fault', (doc) => {
      const code = (doc.eval('string(//bf:BaseFault/bf:ErrorCode)', { bf: ns.wsrfBf }) as string).trim();
      const message = (doc.eval('string(//bf:BaseFault/bf:Description)', { bf: ns.wsrfBf }) as string).trim();
      const faultString = (doc.eval('string(//faultstring)') as string).trim();
      if (!code && !faultString) return undefined;
      return { code: code || 'Fault', message: message || faultString };
    });
  } catch {
    return undefined;
  }
}
