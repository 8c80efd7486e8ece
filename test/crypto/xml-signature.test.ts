import { generateKeyPairSync, type X509Certificate } from 'node:crypto';
import type { XmlElement } from 'libxml2-wasm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { algorithm, dsNs, type SignatureMethod } from '../../src/crypto/xml-signature-algorithms.js';
import { canonicalSignedInfoText } from '../../src/crypto/xml-signature-build.js';
import { canonicalSignedInfo } from '../../src/crypto/xml-signature-canonical.js';
import {
  countersign,
  signAgreement,
  SignatureInvalid,
  SigningCredentialsError,
  verifyAgreementSignatures,
  type ValidateChain,
} from '../../src/crypto/xml-signature.js';
import { c14n } from '../../src/xml/item-constraint.js';
import { withXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { requireTool } from '../support/tools.js';
import { agreementXml, indented } from './xml-signature-fixtures.js';
import { createTestPki, trustingTestCa, type Party, type TestPki } from './xml-signature-pki.js';

/** The test PKI is made with the openssl CLI. */
const available = requireTool('openssl');
let pki: TestPki;
let validateChain: ValidateChain;
const at = () => new Date();

beforeAll(() => {
  if (!available) return;
  pki = createTestPki();
  validateChain = trustingTestCa(pki);
});
afterAll(() => pki?.remove());

const sign = (xml: string, party: Party) => signAgreement(xml, { key: party.key, chain: party.chain });
const verify = (xml: string) => verifyAgreementSignatures(xml, { validateChain, at: at() });
/** The SignatureInvalid message verification ends with (the test fails if it verifies). */
function rejection(xml: string, options: { validateChain?: ValidateChain; at?: Date } = {}): string {
  try {
    verifyAgreementSignatures(xml, { validateChain: options.validateChain ?? validateChain, at: options.at ?? at() });
  } catch (error) {
    if (error instanceof SignatureInvalid) return error.message;
    throw error;
  }
  throw new Error('the document verified');
}
/** Replaces the first occurrence of `from`, which must be there (so no test passes on an unchanged document). */
function edit(xml: string, from: string | RegExp, to: string): string {
  const changed = xml.replace(from, to);
  if (changed === xml) throw new Error(`the document does not contain ${String(from)}`);
  return changed;
}
const canonicalTerms = (xml: string) =>
  withXml(xml, 'agreement', (doc) => c14n(doc.get('/*/wsag:Terms', { wsag: ns.wsag }) as XmlElement));
const termsOf = (xml: string) => /<wsag:Terms[\s>][\s\S]*<\/wsag:Terms>/.exec(xml)?.[0] as string;
const signatureValues = (xml: string) => [...xml.matchAll(/<ds:SignatureValue>([^<]+)</g)].map((m) => m[1] as string);
const certificatesIn = (xml: string) => [...xml.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1] as string);
const base64Of = (certificate: X509Certificate) => certificate.raw.toString('base64');

describe.runIf(available)('signing and verifying an agreement', () => {
  it('RSA: the provider signature is the last child of wsag:Context and verifies, naming the provider', () => {
    const agreement = agreementXml();
    const signed = sign(agreement, pki.provider);
    const lastContextChild = withXml(signed, 'signed', (doc) => {
      const last = doc.get('/wsag:AgreementOffer/wsag:Context/*[last()]', { wsag: ns.wsag }) as XmlElement;
      return `{${last.namespaceUri}}${last.name}`;
    });
    expect(lastContextChild).toBe(`{${dsNs}}Signature`);
    expect(canonicalTerms(signed)).toBe(canonicalTerms(agreement));
    expect(signed).toContain('Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"');

    const result = verify(signed);
    expect(result.provider.identity).toContain('CN=provider.example.org');
    expect(result.provider.certificate.fingerprint256).toBe(pki.provider.chain[0]?.fingerprint256);
    expect(result.initiator).toBeUndefined();
  });

  it('ECDSA P-256: r||s signature value, the intermediate CA in KeyInfo after the leaf, the chain handed over leaf first', () => {
    const signed = sign(agreementXml('advance-reservation'), pki.providerEc);
    expect(signed).toContain('Algorithm="http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"');
    expect(Buffer.from(signatureValues(signed)[0] as string, 'base64')).toHaveLength(64);
    expect(certificatesIn(signed)).toEqual(pki.providerEc.chain.map(base64Of));

    const spy = vi.fn(validateChain);
    const result = verifyAgreementSignatures(signed, { validateChain: spy, at: at() });
    expect(result.provider.identity).toContain('CN=provider-ec.example.org');
    expect(spy).toHaveBeenCalledOnce();
    expect((spy.mock.calls[0]?.[0] as X509Certificate[]).map((c) => c.fingerprint256)).toEqual(
      pki.providerEc.chain.map((c) => c.fingerprint256),
    );
  });

  it('never puts the root CA into KeyInfo', () => {
    const signed = signAgreement(agreementXml(), { key: pki.provider.key, chain: [...pki.provider.chain, pki.ca] });
    expect(certificatesIn(signed)).toEqual([base64Of(pki.provider.chain[0] as X509Certificate)]);
    expect(verify(signed).provider.identity).toContain('provider.example.org');
  });

  it('whitespace between elements is signed as it stands', () => {
    const signed = sign(indented(agreementXml()), pki.provider);
    expect(signed).toMatch(/>\n\s+<wsag:Terms/);
    expect(verify(signed).provider.identity).toContain('provider.example.org');
    expect(rejection(edit(signed, />\n(\s+)<wsag:Terms/, '>\n$1 <wsag:Terms'))).toMatch(
      /^provider signature: digest mismatch/,
    );
  });

  it("the signature is written into the agreement's text, before the Context's end tag, leaving every other character as it was", () => {
    const unsigned = agreementXml();
    const signed = sign(unsigned, pki.provider);
    const start = signed.indexOf('<ds:Signature ');
    const end = signed.indexOf('</ds:Signature>') + '</ds:Signature>'.length;
    expect(signed.slice(end)).toMatch(/^<\/wsag:Context>/);
    expect(signed.slice(0, start) + signed.slice(end)).toBe(unsigned);
    expect(verify(signed).provider.identity).toContain('provider.example.org');
  });

  it('a Context holding comments and CDATA that spell out its end tag, or written as an empty element, is signed in its place', () => {
    const tricky = edit(
      agreementXml(),
      '</wsag:Context>',
      '<!-- </wsag:Context> --><x:Note xmlns:x="urn:x"><![CDATA[</wsag:Context>]]></x:Note></wsag:Context>',
    );
    const signed = sign(tricky, pki.provider);
    expect(signed).toMatch(/<\/x:Note><ds:Signature [\s\S]*<\/ds:Signature><\/wsag:Context>/);
    expect(verify(signed).provider.identity).toContain('provider.example.org');
    // No end tag to write before: the tree is used.
    const empty = edit(agreementXml(), /<wsag:Context[\s\S]*<\/wsag:Context>/, '<wsag:Context/>');
    const signedEmpty = sign(empty, pki.provider);
    expect(signedEmpty).toMatch(/<wsag:Context><ds:Signature [\s\S]*<\/ds:Signature><\/wsag:Context>/);
    expect(verify(signedEmpty).provider.identity).toContain('provider.example.org');
  });

  it("the SignedInfo the signer signs as text is libxml2's exclusive canonical form of the one it adds, for both methods and both places", () => {
    const signedInfos = (xml: string) =>
      withXml(xml, 'signed', (doc) =>
        doc.find('//ds:SignedInfo', { ds: dsNs }).map((node) => {
          const element = node as XmlElement;
          const method = element.get('ds:SignatureMethod/@Algorithm', { ds: dsNs })?.content as SignatureMethod;
          const digest = Buffer.from(element.get('ds:Reference/ds:DigestValue', { ds: dsNs })?.content ?? '', 'base64');
          return {
            libxml2: canonicalSignedInfo(element).toString('utf8'),
            written: canonicalSignedInfoText(method, digest),
          };
        }),
      );
    const both = countersign(sign(agreementXml(), pki.provider), pki.providerEc.key, pki.providerEc.chain);
    const pairs = signedInfos(both);
    expect(pairs).toHaveLength(2);
    for (const { libxml2, written } of pairs) expect(written).toBe(libxml2);
    expect(new Set(pairs.map((p) => /SignatureMethod Algorithm="([^"]+)"/.exec(p.written)?.[1]))).toEqual(
      new Set([algorithm.rsaSha256, algorithm.ecdsaSha256]),
    );
  });

  it('countersigned: both signatures verify; the provider signature is unchanged; the countersignature sits in its ds:Object', () => {
    const signed = sign(agreementXml(), pki.provider);
    const both = countersign(signed, pki.initiator.key, pki.initiator.chain);
    expect(signatureValues(both)[0]).toBe(signatureValues(signed)[0]);
    const place = withXml(
      both,
      'countersigned',
      (doc) =>
        doc.find('/wsag:AgreementOffer/wsag:Context/ds:Signature/ds:Object/ds:Signature', { wsag: ns.wsag, ds: dsNs })
          .length,
    );
    expect(place).toBe(1);

    const result = verify(both);
    expect(result.provider.identity).toContain('CN=provider.example.org');
    expect(result.initiator?.identity).toContain('CN=alice');
    expect(result.initiator?.certificate.fingerprint256).toBe(pki.initiator.chain[0]?.fingerprint256);
  });

  it('one character changed in the Terms: both signatures fail (the provider is checked first)', () => {
    const both = countersign(sign(agreementXml(), pki.provider), pki.initiator.key, pki.initiator.chain);
    expect(rejection(edit(both, '<jsdl:Exact>4<', '<jsdl:Exact>5<'))).toMatch(/^provider signature: digest mismatch: /);
    // A broken countersignature is reported as such (the provider's own digest does not see it).
    const countersignatureValue = signatureValues(both)[1] as string;
    const flipped = countersignatureValue.startsWith('A')
      ? `B${countersignatureValue.slice(1)}`
      : `A${countersignatureValue.slice(1)}`;
    expect(rejection(edit(both, countersignatureValue, flipped))).toMatch(
      /^initiator countersignature: bad signature value: /,
    );
  });

  it('the countersignature covers the provider signature', () => {
    const signed = sign(agreementXml(), pki.provider);
    const both = countersign(signed, pki.initiator.key, pki.initiator.chain);
    // Whitespace added inside the provider's signature: hidden from the provider's own digest, covered by the countersignature's.
    const [providerCertificate] = certificatesIn(both);
    const changed = edit(
      both,
      `<ds:X509Certificate>${providerCertificate}</ds:X509Certificate>`,
      `<ds:X509Certificate>${providerCertificate}</ds:X509Certificate>\n`,
    );
    expect(
      verify(
        edit(
          signed,
          `<ds:X509Certificate>${providerCertificate}</ds:X509Certificate>`,
          `<ds:X509Certificate>${providerCertificate}</ds:X509Certificate>\n`,
        ),
      ).provider,
    ).toBeDefined();
    expect(rejection(changed)).toMatch(/^initiator countersignature: digest mismatch: /);
  });

  it('a chain that does not lead to the trusted CA, or is expired at `at`, is untrusted', () => {
    expect(rejection(sign(agreementXml(), pki.stranger))).toMatch(
      /^provider signature: untrusted chain: .*CN=mallory.*Stranger CA is not a trusted CA/,
    );
    const later = new Date(Date.now() + 400 * 24 * 3600_000);
    expect(rejection(sign(agreementXml(), pki.provider), { at: later })).toMatch(
      /^provider signature: untrusted chain: .*CN=provider.example.org: has expired at /,
    );
    const both = countersign(sign(agreementXml(), pki.provider), pki.stranger.key, pki.stranger.chain);
    expect(rejection(both)).toMatch(/^initiator countersignature: untrusted chain: /);
  });
});

describe.runIf(available)('signature wrapping and structure attacks are rejected', () => {
  let signed: string;
  let countersigned: string;
  beforeAll(() => {
    signed = sign(agreementXml(), pki.provider);
    countersigned = countersign(signed, pki.initiator.key, pki.initiator.chain);
  });
  const forgedTerms = () => edit(termsOf(signed), '<jsdl:Exact>4<', '<jsdl:Exact>64<');

  it('the signed document verifies before each attack', () => {
    expect(verify(signed).provider.identity).toContain('provider.example.org');
    expect(verify(countersigned).initiator?.identity).toContain('alice');
  });

  it('the original Terms moved into a ds:Object, forged Terms in their place', () => {
    const original = termsOf(signed);
    const moved = edit(
      edit(signed, original, forgedTerms()),
      '</ds:KeyInfo>',
      `</ds:KeyInfo><ds:Object>${original}</ds:Object>`,
    );
    expect(rejection(moved)).toMatch(/^agreement structure: the document holds 2 wsag:Terms elements/);
  });

  it('forged Terms added in the Context', () => {
    expect(rejection(edit(signed, '<ds:Signature ', `${forgedTerms()}<ds:Signature `))).toMatch(
      /^agreement structure: the document holds 2 wsag:Terms/,
    );
  });

  it('the signed agreement wrapped in another root', () => {
    expect(rejection(`<x:Envelope xmlns:x="urn:example:wrapper">${signed}</x:Envelope>`)).toMatch(
      /^agreement structure: the root element is \{urn:example:wrapper\}Envelope; a signed agreement is a wsag:AgreementOffer/,
    );
    const asExtension = edit(
      signed.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ''),
      '</wsag:Context>',
      `<x:Old xmlns:x="urn:x">${signed}</x:Old></wsag:Context>`,
    );
    expect(rejection(asExtension)).toMatch(/^agreement structure: /);
  });

  it('a Reference URI pointing elsewhere, or missing', () => {
    expect(rejection(edit(signed, '<ds:Reference URI="">', '<ds:Reference URI="#agreement-1">'))).toBe(
      'provider signature: structure: ds:Reference URI must be "" (the whole agreement); it is "#agreement-1"',
    );
    expect(rejection(edit(signed, '<ds:Reference URI="">', '<ds:Reference>'))).toMatch(
      /URI must be "" .*it is missing/,
    );
  });

  it('an extra Reference', () => {
    const reference = /<ds:Reference[\s\S]*<\/ds:Reference>/.exec(signed)?.[0] as string;
    expect(rejection(edit(signed, reference, reference + reference))).toMatch(
      /^provider signature: structure: ds:SignedInfo holds 2 ds:Reference elements/,
    );
  });

  it('a wrong or missing transform, a weaker algorithm', () => {
    const inclusive = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
    expect(
      rejection(
        edit(
          signed,
          `<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"></ds:Transform>`,
          `<ds:Transform Algorithm="${inclusive}"></ds:Transform>`,
        ),
      ),
    ).toMatch(/^provider signature: structure: ds:Transform Algorithm ".*REC-xml-c14n-20010315" is not allowed/);
    expect(
      rejection(
        edit(
          signed,
          `<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></ds:Transform>`,
          '',
        ),
      ),
    ).toMatch(
      /^provider signature: structure: ds:Transforms must be exactly \[.*enveloped-signature, .*xml-exc-c14n#\]/,
    );
    expect(rejection(edit(signed, 'xmldsig-more#rsa-sha256', 'xmldsig-more#rsa-sha512'))).toMatch(
      /ds:SignatureMethod Algorithm ".*rsa-sha512" is not allowed/,
    );
    expect(
      rejection(edit(signed, '"http://www.w3.org/2001/04/xmlenc#sha256"', '"http://www.w3.org/2000/09/xmldsig#sha1"')),
    ).toMatch(/ds:DigestMethod Algorithm .* is not allowed/);
    expect(
      rejection(
        edit(
          signed,
          '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"></ds:CanonicalizationMethod>',
          `<ds:CanonicalizationMethod Algorithm="${inclusive}"></ds:CanonicalizationMethod>`,
        ),
      ),
    ).toMatch(/ds:CanonicalizationMethod Algorithm .* is not allowed/);
  });

  it('a signature by a certificate from an unknown CA', () => {
    expect(rejection(sign(agreementXml(), pki.stranger))).toMatch(/^provider signature: untrusted chain: /);
  });

  it("a SignatureValue made with another key (the same SignedInfo signed by the stranger's key)", () => {
    const byStranger = sign(agreementXml(), pki.stranger);
    const [ours] = signatureValues(signed);
    const [theirs] = signatureValues(byStranger);
    expect(theirs).not.toBe(ours);
    expect(rejection(edit(signed, ours as string, theirs as string))).toMatch(
      /^provider signature: bad signature value: /,
    );
  });

  it("the stranger's certificate and signature value swapped in: trusted only if its CA is", () => {
    const byStranger = sign(agreementXml(), pki.stranger);
    const swapped = edit(
      edit(signed, certificatesIn(signed)[0] as string, certificatesIn(byStranger)[0] as string),
      signatureValues(signed)[0] as string,
      signatureValues(byStranger)[0] as string,
    );
    expect(rejection(swapped)).toMatch(/^provider signature: untrusted chain: /);
  });

  it('a ds:Signature outside the two places, a second provider signature, a second countersignature', () => {
    const signature = /<ds:Signature [\s\S]*<\/ds:Signature>/.exec(signed)?.[0] as string;
    const inTerms = edit(signed.replace(signature, ''), '<wsag:All>', `<wsag:All>${signature}`);
    expect(rejection(inTerms)).toMatch(
      /^agreement structure: a ds:Signature at \/wsag:AgreementOffer\/wsag:Terms\/wsag:All\/ds:Signature is outside the two signature places/,
    );
    expect(rejection(edit(signed, signature, signature + signature))).toMatch(
      /^agreement structure: wsag:Context holds 2 ds:Signature elements/,
    );
    const countersignature = /<ds:Object>([\s\S]*)<\/ds:Object>/.exec(countersigned)?.[1] as string;
    expect(rejection(edit(countersigned, '</ds:Object>', `${countersignature}</ds:Object>`))).toMatch(
      /ds:Object holds 2 ds:Signature elements/,
    );
  });

  it('other ds:Object content, and ds:Object anywhere else', () => {
    expect(rejection(edit(countersigned, '</ds:Object>', '<ds:Manifest/></ds:Object>'))).toMatch(
      /^provider signature: structure: ds:Object must contain ds:Signature; it contains ds:Signature, ds:Manifest/,
    );
    expect(
      rejection(edit(countersigned, '</ds:Object>', '<x:Note xmlns:x="urn:x">trust me</x:Note></ds:Object>')),
    ).toMatch(/^provider signature: structure: \{urn:x\}Note is not allowed in ds:Object/);
    expect(rejection(edit(signed, '</ds:KeyInfo>', '</ds:KeyInfo><ds:Object>note</ds:Object>'))).toMatch(
      /^provider signature: structure: ds:Object may contain only elements, found "note"/,
    );
    expect(rejection(edit(signed, '</ds:KeyInfo>', '</ds:KeyInfo><ds:Object/>'))).toMatch(
      /^provider signature: structure: ds:Object must contain ds:Signature; it contains nothing/,
    );
    expect(
      rejection(edit(signed, '<wsag:All>', '<wsag:All><ds:Object xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/>')),
    ).toMatch(/^agreement structure: a ds:Object at .*wsag:All\/ds:Object/);
    const countersignatureObject = edit(
      countersigned,
      /(<ds:Signature><ds:SignedInfo>[\s\S]*?<\/ds:KeyInfo>)/,
      '$1<ds:Object/>',
    );
    expect(rejection(countersignatureObject)).toMatch(
      /^agreement structure: a ds:Object at .*ds:Object\/ds:Signature\/ds:Object/,
    );
  });

  it('other key material in KeyInfo, attributes the profile does not know', () => {
    expect(rejection(edit(signed, '<ds:KeyInfo>', '<ds:KeyInfo><ds:KeyName>provider</ds:KeyName>'))).toMatch(
      /ds:KeyInfo must contain ds:X509Data; it contains ds:KeyName, ds:X509Data/,
    );
    expect(
      rejection(
        edit(signed, '<ds:Reference URI="">', '<ds:Reference URI="" Type="http://www.w3.org/2000/09/xmldsig#Object">'),
      ),
    ).toMatch(/ds:Reference may not carry the attribute Type/);
  });

  it('an unsigned agreement, a DTD, a document that is not XML', () => {
    expect(rejection(agreementXml())).toMatch(/^provider signature: structure: the agreement is not signed/);
    expect(rejection(`<!DOCTYPE wsag:AgreementOffer [<!ENTITY x "y">]>${signed}`)).toMatch(
      /^agreement structure: DOCTYPE is not allowed/,
    );
    expect(rejection(signed.slice(0, -'</wsag:AgreementOffer>'.length))).toMatch(
      /^agreement structure: agreement is not well-formed XML/,
    );
  });
});

describe.runIf(available)('signing refuses unsuitable credentials and documents', () => {
  it("short RSA keys, other curves, a key that is not the certificate's, a chain out of order", () => {
    const { privateKey: short } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const { privateKey: p384 } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const attempt =
      (key = pki.provider.key, chain = pki.provider.chain) =>
      () =>
        signAgreement(agreementXml(), { key, chain });
    expect(attempt(short)).toThrow(
      new SigningCredentialsError('the signing key is refused: an RSA key of 1024 bits is too short (at least 2048)'),
    );
    expect(attempt(p384)).toThrow(/EC keys must be on P-256, not secp384r1/);
    expect(attempt(pki.initiator.key)).toThrow(/the signing key does not belong to the first certificate of the chain/);
    expect(
      attempt(pki.providerEc.key, [
        pki.providerEc.chain[0] as X509Certificate,
        pki.ca,
        ...pki.providerEc.chain.slice(1),
      ]),
    ).toThrow(/certificate 1 of the chain is not issued by certificate 2: give the chain leaf first/);
    expect(attempt(pki.provider.key, [])).toThrow(/chain is empty/);
  });

  it('signing twice, countersigning an unsigned or countersigned agreement', () => {
    const signed = sign(agreementXml(), pki.provider);
    expect(() => sign(signed, pki.provider)).toThrow(/already signed/);
    expect(() => countersign(agreementXml(), pki.initiator.key, pki.initiator.chain)).toThrow(SignatureInvalid);
    const both = countersign(signed, pki.initiator.key, pki.initiator.chain);
    expect(() => countersign(both, pki.initiator.key, pki.initiator.chain)).toThrow(/already countersigned/);
  });
});
