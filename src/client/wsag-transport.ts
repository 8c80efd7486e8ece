import type { KeyObject, X509Certificate } from 'node:crypto';
import { messageId, secureEnvelope } from '../crypto/ws-security-sign.js';
import { escapeXml } from '../xml/escape.js';
import { c14n, elementChildren } from '../xml/item-constraint.js';
import { withXml } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { one } from '../xml/xpath.js';
import { plainEnvelope, referenceParameter, type ResourceRef } from './soap-requests.js';

/**
 * How the client talks to a server: SOAP calls and their faults, JSON requests and their pages, over one HTTP function
 * (WsagClient names the operations).
 */
export abstract class WsagTransport {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    protected readonly fetchImpl: typeof fetch = fetch,
    /** Sign every request with WS-Security as this party (for servers behind TLS terminators). */
    protected readonly signer?: { key: KeyObject; chain: X509Certificate[] },
  ) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
  }

  /**
   * A JSON route of the /api face (the bank, for `wsag account`): its answer, or the problem document's fault as a
   * WsagFault.
   */
  request<T>(path: string, what: string, init?: RequestInit): Promise<T> {
    return this.json<T>(path, what, init);
  }

  /** A route that answers a document (a usage record): its text. */
  requestText(path: string, what: string): Promise<string> {
    return this.http(path, what, undefined, (text) => text);
  }

  protected async json<T>(path: string, what: string, init?: RequestInit): Promise<T> {
    return this.http(path, what, init, (text) => JSON.parse(text) as T);
  }

  /** A paged listing read to its end, following each Link rel="next" (src/web/listing.ts). */
  async allPages<T>(path: string, what: string): Promise<T[]> {
    const all: T[] = [];
    for (let next: string | undefined = path; next !== undefined; ) {
      const page: { items: T[]; next: string | undefined } = await this.http(
        next,
        what,
        undefined,
        (text, response) => ({
          items: JSON.parse(text) as T[],
          next: /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1],
        }),
      );
      all.push(...page.items);
      next = page.next;
    }
    return all;
  }

  protected async http<T>(
    path: string,
    what: string,
    init: RequestInit | undefined,
    read: (text: string, response: Response) => T,
  ): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    let response: Response;
    try {
      // The server takes a request that may change something only with a header no form on another site can set.
      response = await this.fetchImpl(url, {
        ...init,
        headers: { 'x-requested-with': 'wsag-client', ...(init?.headers as Record<string, string> | undefined) },
      });
    } catch (error) {
      throw unreachable(url, error);
    }
    const text = await response.text();
    if (response.ok) {
      try {
        return read(text, response);
      } catch {
        throw new Error(`${what} failed: ${url} answered something unreadable`);
      }
    }
    let problem: { error?: unknown; message?: unknown } | undefined;
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch {
      problem = undefined;
    }
    if (typeof problem?.error === 'string' && typeof problem.message === 'string')
      throw new WsagFault(problem.error, problem.message, response.status);
    throw new Error(`${what} failed: ${url} answered HTTP ${response.status}`);
  }

  protected async getResourceProperty(
    endpoint: string,
    qname: string,
    resource?: string | ResourceRef,
  ): Promise<string[]> {
    const body =
      `<rp:GetResourceProperty xmlns:rp="${ns.wsrfRp}" xmlns:wsag="${ns.wsag}" xmlns:wsag-neg="` +
      `${ns.wsagNeg}">${qname}</rp:GetResourceProperty>`;
    const response = await this.call(endpoint, `${rpw}/GetResourceProperty/GetResourcePropertyRequest`, body, resource);
    return withXml(response, 'response', (doc) => {
      const holder = one(doc.root, '//rp:GetResourcePropertyResponse');
      return holder ? elementChildren(holder).map(c14n) : [];
    });
  }

  /**
   * Posts one SOAP 1.1 request; returns the response envelope, or throws WsagFault.
   * `resource` is the addressed resource's reference parameter (a plain string is an
   * agreement id), sent as a SOAP header as WS-Addressing requires.
   */
  async call(endpoint: string, action: string, body: string, resource?: string | ResourceRef): Promise<string> {
    const reference = referenceParameter(resource);
    const envelope = this.signer
      ? secureEnvelope({
          soapNamespace: ns.soap11,
          // To and Action are signed with the body, so a captured message cannot be sent elsewhere.
          headers: [
            `<wsa:To xmlns:wsa="${ns.wsa}">${escapeXml(endpoint)}</wsa:To>`,
            `<wsa:Action xmlns:wsa="${ns.wsa}">${escapeXml(action)}</wsa:Action>`,
            `<wsa:MessageID xmlns:wsa="${ns.wsa}">${messageId()}</wsa:MessageID>`,
            ...(reference ? [reference] : []),
          ],
          body,
          key: this.signer.key,
          chain: this.signer.chain,
          now: new Date(),
        })
      : plainEnvelope(body, resource);
    let response: Response;
    try {
      response = await this.fetchImpl(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` },
        body: envelope,
      });
    } catch (error) {
      throw unreachable(endpoint, error);
    }
    const text = await response.text();
    if (response.ok) return text;
    const fault = readFault(text);
    if (fault) throw new WsagFault(fault.code, fault.message, response.status, fault.technicalDetail);
    throw new Error(`${endpoint} answered HTTP ${response.status} without a SOAP Fault`);
  }
}

/** A SOAP Fault the server answered with: `code` is the protocol fault code (PROTOCOL.md). */
export class WsagFault extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly httpStatus: number,
    readonly technicalDetail?: string,
  ) {
    super(`${code}: ${description}`);
    this.name = 'WsagFault';
  }
}

export const rpw = 'http://docs.oasis-open.org/wsrf/rpw-2';

export function unreachable(url: string, error: unknown): Error {
  const e = error as Error;
  return new Error(`cannot reach ${url}: ${e.cause ? String(e.cause) : e.message}`);
}

export function readFault(text: string): { code: string; message: string; technicalDetail?: string } | undefined {
  try {
    return withXml(text, 'fault', (doc) => {
      const code = (doc.eval('string(//bf:BaseFault/bf:ErrorCode)', { bf: ns.wsrfBf }) as string).trim();
      const message = (doc.eval('string(//bf:BaseFault/bf:Description)', { bf: ns.wsrfBf }) as string).trim();
      const faultString = (doc.eval('string(//faultstring)') as string).trim();
      if (!code && !faultString) return undefined;
      const technicalDetail = (
        doc.eval('string(//bf:BaseFault/bf:Description[2])', { bf: ns.wsrfBf }) as string
      ).trim();
      return {
        code: code || 'Fault',
        message: message || faultString,
        ...(technicalDetail ? { technicalDetail } : {}),
      };
    });
  } catch {
    return undefined;
  }
}
