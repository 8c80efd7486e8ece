import { ns } from '../../src/xml/namespaces.js';

/** Raw SOAP helpers for tests that must control every byte on the wire. */
export function soap11(body: string, header = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${ns.soap11}">${header ? `<soap:Header>${header}</soap:Header>` : ''}<soap:Body>${body}</soap:Body></soap:Envelope>`;
}

export function soap12(body: string, header = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${ns.soap12}">${header ? `<soap:Header>${header}</soap:Header>` : ''}<soap:Body>${body}</soap:Body></soap:Envelope>`;
}

export function agreementHeader(id: string): string {
  return `<srv:AgreementId xmlns:srv="${ns.srv}">${id}</srv:AgreementId>`;
}

export interface PostResult {
  status: number;
  contentType: string;
  text: string;
}

export async function post(
  url: string,
  body: string | Buffer,
  contentType = 'text/xml; charset=utf-8',
): Promise<PostResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

/** The fault code and message from a fault envelope (both SOAP versions carry a WS-BaseFaults detail). */
/** A fault's code, its plain message (the first bf:Description) and the technical text behind it (a second, if any). */
export function faultOf(text: string): { code: string; message: string; technicalDetail?: string } {
  const code = /<bf:ErrorCode[^>]*>([^<]*)<\/bf:ErrorCode>/.exec(text)?.[1] ?? '';
  const unescape = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  const [message, technicalDetail] = [...text.matchAll(/<bf:Description>([^<]*)<\/bf:Description>/g)].map((m) =>
    unescape(m[1] as string),
  );
  return { code, message: message ?? '', ...(technicalDetail === undefined ? {} : { technicalDetail }) };
}

export function createAgreementBody(offerXml: string): string {
  return `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${offerXml}</wsag:CreateAgreementInput>`;
}
