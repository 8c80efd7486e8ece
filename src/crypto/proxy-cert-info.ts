import * as asn1js from 'asn1js';

/** id-pe-proxyCertInfo (RFC 3820 3.8): the extension that makes a certificate a proxy. */
export const proxyCertInfoOid = '1.3.6.1.5.5.7.1.14';
/** id-ppl-inheritAll: the proxy holds all the rights of its issuer (RFC 3820 3.8.2). */
export const inheritAllOid = '1.3.6.1.5.5.7.21.1';
/** id-ppl-independent: the proxy holds none of its issuer's rights. */
export const independentOid = '1.3.6.1.5.5.7.21.2';

/**
 * ProxyCertInfo ::= SEQUENCE {
 *   pCPathLenConstraint  INTEGER (0..MAX) OPTIONAL,
 *   proxyPolicy          ProxyPolicy }
 * ProxyPolicy ::= SEQUENCE {
 *   policyLanguage       OBJECT IDENTIFIER,
 *   policy               OCTET STRING OPTIONAL }
 */
export interface ProxyCertInfo {
  /** How many proxies may follow this one below it; absent: no limit. */
  pathLength?: number;
  policyLanguage: string;
  policy?: Uint8Array;
}

export function encodeProxyCertInfo(info: ProxyCertInfo): ArrayBuffer {
  const policy: asn1js.AsnType[] = [new asn1js.ObjectIdentifier({ value: info.policyLanguage })];
  if (info.policy) policy.push(new asn1js.OctetString({ valueHex: info.policy }));
  const fields: asn1js.AsnType[] = [];
  if (info.pathLength !== undefined) fields.push(new asn1js.Integer({ value: info.pathLength }));
  fields.push(new asn1js.Sequence({ value: policy }));
  return new asn1js.Sequence({ value: fields }).toBER();
}

/** The ProxyCertInfo in an extension value; throws an Error saying what is malformed. */
export function decodeProxyCertInfo(der: ArrayBuffer | Uint8Array): ProxyCertInfo {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  const parsed = asn1js.fromBER(bytes);
  if (parsed.offset === -1 || parsed.offset !== bytes.byteLength)
    throw new Error('ProxyCertInfo is not a single DER value');
  const root = parsed.result;
  if (!(root instanceof asn1js.Sequence)) throw new Error('ProxyCertInfo is not a SEQUENCE');
  const fields = [...root.valueBlock.value];
  let pathLength: number | undefined;
  if (fields[0] instanceof asn1js.Integer) {
    const value = fields.shift() as asn1js.Integer;
    const big = value.toBigInt();
    if (big < 0n || big > BigInt(Number.MAX_SAFE_INTEGER))
      throw new Error('ProxyCertInfo pCPathLenConstraint is out of range');
    pathLength = Number(big);
  }
  const policy = fields.shift();
  if (!(policy instanceof asn1js.Sequence) || fields.length > 0)
    throw new Error('ProxyCertInfo has no proxyPolicy SEQUENCE (or trailing fields)');
  const [language, text, ...rest] = policy.valueBlock.value;
  if (!(language instanceof asn1js.ObjectIdentifier))
    throw new Error('ProxyPolicy has no policyLanguage OBJECT IDENTIFIER');
  if (rest.length > 0 || (text !== undefined && !(text instanceof asn1js.OctetString)))
    throw new Error('ProxyPolicy policy is not an OCTET STRING');
  return {
    ...(pathLength !== undefined ? { pathLength } : {}),
    policyLanguage: language.valueBlock.toString(),
    ...(text instanceof asn1js.OctetString ? { policy: new Uint8Array(text.valueBlock.valueHexView) } : {}),
  };
}
