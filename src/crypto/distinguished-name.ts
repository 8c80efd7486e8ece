import type { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Name,
  RelativeDistinguishedName,
} from '@peculiar/asn1-x509';

/** OpenSSL's short names for the attribute types found in Grid DNs (OBJ_nid2sn). */
const shortNames: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.4': 'SN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'street',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.12': 'title',
  '2.5.4.17': 'postalCode',
  '2.5.4.41': 'name',
  '2.5.4.42': 'GN',
  '2.5.4.43': 'initials',
  '2.5.4.44': 'generationQualifier',
  '2.5.4.46': 'dnQualifier',
  '2.5.4.65': 'pseudonym',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.1': 'UID',
  '0.9.2342.19200300.100.1.25': 'DC',
};
const oidsByShortName = new Map(Object.entries(shortNames).map(([oid, short]) => [short, oid]));

export const commonNameOid = '2.5.4.3';

/**
 * The OpenSSL "oneline" form of a name (X509_NAME_oneline), as Grid tools print it and
 * grid-mapfiles list it: `/C=DE/O=Grid/CN=Alice`. RDNs in certificate order, each after a
 * `/`; the values of a multi-valued RDN joined by `+`; `/` and `+` inside a value escaped
 * with a backslash and bytes outside printable ASCII as `\xHH` (as OpenSSL 3 does).
 * Attribute types without a short name print as dotted OIDs.
 */
export function gridDn(name: Name | X509Certificate): string {
  const rdns = name instanceof Name ? name : subjectName(name);
  return rdns
    .map((rdn) => `/${rdn.map((atv) => `${shortNames[atv.type] ?? atv.type}=${onelineValue(atv.value)}`).join('+')}`)
    .join('');
}

function onelineValue(value: AttributeValue): string {
  if (value.anyValue) return `#${Buffer.from(value.anyValue).toString('hex').toUpperCase()}`;
  const text = value.toString();
  const bytes =
    value.bmpString !== undefined
      ? utf16be(text)
      : value.universalString !== undefined
        ? utf32be(text)
        : Buffer.from(text, 'utf8');
  let out = '';
  for (const byte of bytes) {
    if (byte === 0x2f || byte === 0x2b) out += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte > 0x7e) out += `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return out;
}

function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  return Buffer.from(le.swap16());
}

function utf32be(text: string): Buffer {
  const codePoints = [...text].map((c) => c.codePointAt(0) ?? 0);
  const buffer = Buffer.alloc(codePoints.length * 4);
  codePoints.forEach((cp, i) => buffer.writeUInt32BE(cp, i * 4));
  return buffer;
}

/** The parsed certificate (tbsCertificate with subject, issuer and extensions). */
export function parseCertificate(certificate: X509Certificate): Certificate {
  return AsnConvert.parse(certificate.raw, Certificate);
}

export function subjectName(certificate: X509Certificate): Name {
  return parseCertificate(certificate).tbsCertificate.subject;
}

/**
 * A name from (type, value) pairs in certificate order, one attribute per RDN: types are
 * OpenSSL short names (`C`, `O`, `OU`, `CN`, `DC`, `emailAddress`, ...) or dotted OIDs.
 * Values are PrintableString when they fit, else UTF8String (IA5String for DC and emailAddress).
 */
export function nameFromParts(parts: [type: string, value: string][]): Name {
  return new Name(parts.map(([type, value]) => new RelativeDistinguishedName([attribute(type, value)])));
}

/** `name` with one more RDN, a single CN: the subject of a proxy issued by the holder of `name` (RFC 3820 3.4). */
export function appendCommonName(name: Name, commonName: string): Name {
  return new Name([...name, new RelativeDistinguishedName([attribute('CN', commonName)])]);
}

/** The DER encoding of a name, for exact comparisons and for the certificate generator. */
export function nameDer(name: Name | RelativeDistinguishedName): Buffer {
  let der = encodings.get(name);
  if (!der) {
    der = Buffer.from(AsnConvert.serialize(name));
    encodings.set(name, der);
  }
  return der;
}

/** Names of cached certificate facts are compared again and again; their encoding is kept with them. */
const encodings = new WeakMap<Name | RelativeDistinguishedName, Buffer>();

/** Whether two names (or RDNs) have the same encoding. */
export function sameName(a: Name | RelativeDistinguishedName, b: Name | RelativeDistinguishedName): boolean {
  return nameDer(a).equals(nameDer(b));
}

function attribute(type: string, value: string): AttributeTypeAndValue {
  const oid = /^\d+(\.\d+)+$/.test(type) ? type : oidsByShortName.get(type);
  if (!oid) throw new Error(`unknown attribute type "${type}" in a distinguished name`);
  if (value === '') throw new Error(`empty value for ${type} in a distinguished name`);
  const ia5 = oid === '0.9.2342.19200300.100.1.25' || oid === '1.2.840.113549.1.9.1';
  const printable = /^[A-Za-z0-9 '()+,\-./:=?]+$/.test(value);
  const attributeValue = ia5
    ? new AttributeValue({ ia5String: value })
    : printable
      ? new AttributeValue({ printableString: value })
      : new AttributeValue({ utf8String: value });
  return new AttributeTypeAndValue({ type: oid, value: attributeValue });
}
