import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countersign,
  signAgreement,
  SignatureInvalid,
  verifyAgreementSignatures,
} from '../../src/crypto/xml-signature.js';
import { requireTool } from '../support/tools.js';
import { referenceValidationErrors } from '../support/xmllint.js';
import { agreementXml, indented } from './xml-signature-fixtures.js';
import { createTestPki, trustingTestCa, type Party, type TestPki } from './xml-signature-pki.js';

/**
 * A third party checks an exported agreement with xmlsec1 and the CA file alone (no
 * --pubkey-cert-pem: the certificate the document carries is only trusted through the CA),
 * and our verifier agrees with it both ways. Signed documents stay valid against the
 * reference WS-Agreement schemas (xmllint).
 */
const available = requireTool('xmlsec1') && requireTool('xmllint') && requireTool('openssl');

const element = (name: string) => `*[local-name()='${name}']`;
const providerSignature = `/${element('AgreementOffer')}/${element('Context')}/${element('Signature')}`;
const countersignature = `${providerSignature}/${element('Object')}/${element('Signature')}`;

let pki: TestPki;
let fileNumber = 0;

beforeAll(() => {
  if (available) pki = createTestPki();
});
afterAll(() => pki?.remove());

function write(xml: string): string {
  const file = path.join(pki.dir, `document-${++fileNumber}.xml`);
  fs.writeFileSync(file, xml);
  return file;
}

/** xmlsec1's verdict on the signature at `xpath`: true if it verifies with `caFile` as the only trusted certificate. */
function xmlsec1Accepts(xml: string, xpath: string, caFile = pki.caFile): boolean {
  try {
    execFileSync(
      'xmlsec1',
      ['--verify', '--trusted-pem', caFile, '--enabled-reference-uris', 'empty', '--node-xpath', xpath, write(xml)],
      { stdio: 'pipe' },
    );
    return true;
  } catch {
    return false;
  }
}

const sign = (xml: string, party: Party) => signAgreement(xml, { key: party.key, chain: party.chain });
const verify = (xml: string) => verifyAgreementSignatures(xml, { validateChain: trustingTestCa(pki), at: new Date() });

describe.runIf(available)('agreement signatures with xmlsec1 and xmllint', () => {
  it('xmlsec1 accepts provider signatures (RSA; ECDSA with an intermediate CA) with the CA file alone', () => {
    expect(xmlsec1Accepts(sign(agreementXml(), pki.provider), providerSignature)).toBe(true);
    expect(xmlsec1Accepts(sign(agreementXml('advance-reservation'), pki.providerEc), providerSignature)).toBe(true);
    expect(xmlsec1Accepts(sign(indented(agreementXml()), pki.provider), providerSignature)).toBe(true);
  });

  it('xmlsec1 accepts the provider signature and the countersignature of a countersigned agreement', () => {
    const both = countersign(sign(agreementXml(), pki.provider), pki.initiator.key, pki.initiator.chain);
    expect(xmlsec1Accepts(both, providerSignature)).toBe(true);
    expect(xmlsec1Accepts(both, countersignature)).toBe(true);
  });

  it('one character changed in the Terms: xmlsec1 and our verifier both fail', () => {
    const both = countersign(sign(agreementXml(), pki.provider), pki.initiator.key, pki.initiator.chain);
    const changed = both.replace('<jsdl:Exact>4<', '<jsdl:Exact>5<');
    expect(changed).not.toBe(both);
    expect(xmlsec1Accepts(changed, providerSignature)).toBe(false);
    expect(xmlsec1Accepts(changed, countersignature)).toBe(false);
    expect(() => verify(changed)).toThrow(SignatureInvalid);
  });

  it('the CA file decides: another CA makes xmlsec1 refuse, and a stranger-signed agreement fails with ours', () => {
    const signed = sign(agreementXml(), pki.provider);
    expect(xmlsec1Accepts(signed, providerSignature, pki.strangerCaFile)).toBe(false);
    expect(xmlsec1Accepts(sign(agreementXml(), pki.stranger), providerSignature)).toBe(false);
  });

  it('a countersignature made by xmlsec1 from a template verifies with our verifier', () => {
    const signed = sign(agreementXml(), pki.provider);
    const template =
      '<ds:Object><ds:Signature><ds:SignedInfo>' +
      '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>' +
      '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"/>' +
      '<ds:Reference URI=""><ds:Transforms>' +
      '<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>' +
      '<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>' +
      '</ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference>' +
      '</ds:SignedInfo><ds:SignatureValue/><ds:KeyInfo><ds:X509Data/></ds:KeyInfo></ds:Signature></ds:Object>';
    const withTemplate = signed.replace('</ds:KeyInfo>', `</ds:KeyInfo>${template}`);
    const output = path.join(pki.dir, 'xmlsec1-countersigned.xml');
    execFileSync(
      'xmlsec1',
      [
        '--sign',
        '--privkey-pem',
        `${pki.initiator.keyFile},${pki.initiator.certFile}`,
        '--node-xpath',
        countersignature,
        '--output',
        output,
        write(withTemplate),
      ],
      {
        stdio: 'pipe',
      },
    );
    const result = verify(fs.readFileSync(output, 'utf8'));
    expect(result.provider.identity).toContain('CN=provider.example.org');
    expect(result.initiator?.identity).toContain('CN=alice');
  });

  it('signed and countersigned agreements validate against the reference WS-Agreement schemas', async () => {
    const signed = sign(agreementXml(), pki.provider);
    const both = countersign(signed, pki.initiator.key, pki.initiator.chain);
    const ec = sign(agreementXml('advance-reservation'), pki.providerEc);
    expect(
      await referenceValidationErrors({ unsigned: agreementXml(), signed, countersigned: both, 'signed-ecdsa': ec }),
    ).toEqual({});
  });
});
