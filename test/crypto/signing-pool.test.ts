import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningPool } from '../../src/crypto/signing-pool.js';
import { verifyAgreementSignatures, type ValidateChain } from '../../src/crypto/xml-signature.js';
import { requireTool } from '../support/tools.js';
import { agreementXml } from './xml-signature-fixtures.js';
import { createTestPki, trustingTestCa, type TestPki } from './xml-signature-pki.js';

/** The test PKI is made with the openssl CLI. */
const available = requireTool('openssl');
let pki: TestPki;
let validateChain: ValidateChain;
beforeAll(() => {
  if (!available) return;
  pki = createTestPki();
  validateChain = trustingTestCa(pki);
});
afterAll(() => pki?.remove());

describe.runIf(available)('SigningPool', () => {
  for (const threads of [0, 2]) {
    it(`with ${threads} worker threads: every agreement signed at once verifies as the provider's, on its own document`, async () => {
      const pool = SigningPool.start({ key: pki.provider.key, chain: pki.provider.chain }, threads);
      try {
        expect(pool.threads).toBe(threads);
        const documents = Array.from({ length: 12 }, (_, i) => agreementXml('deadline-job', `agreement-${i}`));
        const signed = await Promise.all(documents.map((d) => pool.sign(d)));
        signed.forEach((xml, i) => {
          expect(xml).toContain(`agreement-${i}`);
          expect(verifyAgreementSignatures(xml, { validateChain, at: new Date() }).provider.identity).toContain('CN=provider.example.org');
        });
      } finally {
        await pool.close();
      }
      expect(pool.threads).toBe(0);
    });
  }

  it('compiled (dist/, as npm start runs it), signs on its thread with the compiled worker', async () => {
    // `npm test` builds dist/ before the tests run.
    const compiled = (await import(new URL('../../dist/crypto/signing-pool.js', import.meta.url).href)) as typeof import('../../src/crypto/signing-pool.js');
    const pool = compiled.SigningPool.start({ key: pki.provider.key, chain: pki.provider.chain }, 1);
    try {
      expect(pool.threads).toBe(1);
      const signed = await pool.sign(agreementXml());
      expect(verifyAgreementSignatures(signed, { validateChain, at: new Date() }).provider.identity).toContain('CN=provider.example.org');
    } finally {
      await pool.close();
    }
  });

  it('refuses, as signing on the loop does, a document that is already signed', async () => {
    const pool = SigningPool.start({ key: pki.provider.key, chain: pki.provider.chain }, 1);
    try {
      const signed = await pool.sign(agreementXml());
      await expect(pool.sign(signed)).rejects.toThrow('already signed');
    } finally {
      await pool.close();
    }
  });
});
