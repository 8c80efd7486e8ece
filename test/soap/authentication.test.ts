import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsFetch } from '../../src/client/tls-fetch.js';
import { WsagClient, WsagFault } from '../../src/client/wsag-client.js';
import { loadCredential, type Credential } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { certificatePem, privateKeyPem } from '../../src/crypto/pem.js';
import { issueProxy } from '../../src/crypto/proxy.js';
import { TrustStore } from '../../src/crypto/trust-store.js';
import { countersign, verifyAgreementSignatures } from '../../src/crypto/xml-signature.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** Over TLS a user's proxy creates an agreement; others cannot read or terminate it; no or foreign certificates are refused. */
describe('authentication and authorisation over TLS and WS-Security', () => {
  let server: TestServer;
  let pki: string;
  let alice: Credential;
  let aliceProxy: Credential;
  let bob: Credential;
  let stranger: Credential;
  let offer: string;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-auth-'));
    pki = path.join(dataDir, 'pki');
    await createDemoPki({ dir: pki, keyType: 'ec' });
    const foreign = path.join(dataDir, 'foreign');
    await createDemoPki({ dir: foreign, keyType: 'ec' });
    alice = loadCredential(path.join(pki, 'alice.pem'), path.join(pki, 'alice.key'));
    bob = loadCredential(path.join(pki, 'bob.pem'), path.join(pki, 'bob.key'));
    stranger = loadCredential(path.join(foreign, 'alice.pem'), path.join(foreign, 'alice.key'));
    const proxy = await issueProxy({ issuerCert: alice.certificate, issuerKey: alice.privateKey, hours: 1 });
    aliceProxy = { certificate: proxy.certificate, privateKey: proxy.privateKey, chain: [alice.certificate] };
    // Alice books the template's window many times over here: fair use (test/security/fair-use.test.ts) would stop her.
    server = await startTestServer({
      config: { dataDir, tlsPort: 0, anonymous: 'deny', signAgreements: true, fairUse: 'off', ...paths(pki) },
    });
    const templates = await tlsClient(aliceProxy).templates();
    offer = offerFromTemplate(templates.find((t) => t.includes('advance-reservation')) ?? (templates[0] as string), []);
  }, 60_000);
  afterAll(async () => server?.close());

  const paths = (dir: string) => ({
    caFile: path.join(dir, 'ca.pem'),
    tlsCertFile: path.join(dir, 'server.pem'),
    tlsKeyFile: path.join(dir, 'server.key'),
  });
  const tlsClient = (who?: Credential, ca = path.join(pki, 'ca.pem')): WsagClient =>
    new WsagClient(
      server.tlsUrl as string,
      tlsFetch({
        cert: who ? [who.certificate, ...who.chain].map(certificatePem).join('') : '',
        key: who ? privateKeyPem(who.privateKey) : '',
        ca: fs.readFileSync(ca, 'utf8'),
      }),
    );
  const faultOf = async (call: Promise<unknown>): Promise<WsagFault> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WsagFault);
    return error as WsagFault;
  };

  it("a user's proxy creates an agreement that belongs to the user, not the proxy", async () => {
    const client = tlsClient(aliceProxy);
    const { agreementId } = await client.createAgreement(offer);
    const [mine] = (await client.agreements()).filter((a) => a.id === agreementId);
    expect(mine?.initiator).toBe('/C=DE/O=wsag-demo/OU=users/CN=alice');
    expect((await client.state(agreementId)).state).toBe('Observed');
    // The same user without a proxy is the same party.
    expect((await tlsClient(alice).state(agreementId)).state).toBe('Observed');
  });

  it('a second user can neither read nor terminate it', async () => {
    const { agreementId } = await tlsClient(aliceProxy).createAgreement(offer);
    const asBob = tlsClient(bob);
    expect((await faultOf(asBob.state(agreementId))).code).toBe('NotAuthorized');
    expect((await faultOf(asBob.terminate(agreementId))).code).toBe('NotAuthorized');
    expect((await asBob.agreements()).map((a) => a.id)).not.toContain(agreementId);
    expect((await tlsClient(aliceProxy).state(agreementId)).state).toBe('Observed');
  });

  it('a party the initiator names in srv:EligibleParty may read and use the agreement; others still may not', async () => {
    const eligible = `<srv:EligibleParty xmlns:srv="http://schemas.wsag-server.org/2026/11/server">/C=DE/O=wsag-demo/OU=users/CN=bob</srv:EligibleParty></wsag:Context>`;
    expect(offer).toContain('</wsag:Context>');
    const { agreementId } = await tlsClient(aliceProxy).createAgreement(offer.replace('</wsag:Context>', eligible));
    expect((await tlsClient(bob).state(agreementId)).state).toBe('Observed');
    expect(await tlsClient(bob).agreementDocument(agreementId)).toContain('CN=bob</srv:EligibleParty>');
    expect(
      (
        await faultOf(
          new WsagClient(server.url, fetch, { key: stranger.privateKey, chain: [stranger.certificate] }).state(
            agreementId,
          ),
        )
      ).code,
    ).toBe('NotAuthenticated');
  });

  it('refuses a request without a client certificate, or with one from an unknown CA', async () => {
    const none = await faultOf(tlsClient(undefined).templates());
    expect(none.code).toBe('NotAuthenticated');
    const foreign = await faultOf(tlsClient(stranger).templates());
    expect(foreign.code).toBe('NotAuthenticated');
    expect(foreign.description).toMatch(/TLS client certificate is not accepted: .*/);
  });

  it('refuses anonymous plain HTTP when anonymous access is denied', async () => {
    const fault = await faultOf(new WsagClient(server.url).templates());
    expect(fault.code).toBe('NotAuthenticated');
  });

  it('accepts a WS-Security signature over plain HTTP (behind a TLS terminator), with the same ownership rules', async () => {
    const asAlice = new WsagClient(server.url, fetch, {
      key: aliceProxy.privateKey,
      chain: [aliceProxy.certificate, ...aliceProxy.chain],
    });
    const { agreementId } = await asAlice.createAgreement(offer);
    expect((await asAlice.state(agreementId)).state).toBe('Observed');
    const asBob = new WsagClient(server.url, fetch, { key: bob.privateKey, chain: [bob.certificate] });
    expect((await faultOf(asBob.terminate(agreementId))).code).toBe('NotAuthorized');
    const asStranger = new WsagClient(server.url, fetch, { key: stranger.privateKey, chain: [stranger.certificate] });
    expect((await faultOf(asStranger.templates())).description).toMatch(
      /WS-Security: the signing certificate is not accepted/,
    );
  });

  it('refuses a WS-Security message whose signed body was changed, or that is not signed by the key of its token', async () => {
    const signedBy = (who: Credential) =>
      new WsagClient(
        server.url,
        async (url, init) => {
          const tampered = String(init?.body).replace('wsag:Name>', 'wsag:Name>x');
          return fetch(url, { ...init, body: tampered });
        },
        { key: who.privateKey, chain: [who.certificate] },
      );
    const changed = await faultOf(signedBy(alice).createAgreement(offer.replace('<wsag:Name>', '<wsag:Name>')));
    expect(changed.code).toBe('NotAuthenticated');
    const wrongKey = new WsagClient(server.url, fetch, { key: bob.privateKey, chain: [alice.certificate] });
    expect((await faultOf(wrongKey.templates())).description).toMatch(/SignatureValue does not verify|WS-Security/);
  });

  it('refuses a signed message addressed to another provider, however often it is posted here', async () => {
    // Alice signed a CreateAgreement for another provider; someone posts it here on the plain port.
    const elsewhere = new WsagClient(
      'http://other-provider.example:8080',
      (_url, init) => fetch(`${server.url}/wsag/AgreementFactory`, init),
      { key: alice.privateKey, chain: [alice.certificate] },
    );
    for (let i = 0; i < 3; i++) {
      const fault = await faultOf(elsewhere.createAgreement(offer));
      expect(fault.code).toBe('NotAuthenticated');
      expect(fault.description).toBe(
        `the message is addressed to http://other-provider.example:8080/wsag/AgreementFactory (wsa:To), not to this port (${server.url}/wsag/AgreementFactory): a message counts only where it was sent`,
      );
    }
  });

  it('never lets a failing WS-Security signature hide behind a good TLS client certificate', async () => {
    const tls = tlsFetch({
      cert: [alice.certificate, ...alice.chain].map(certificatePem).join(''),
      key: privateKeyPem(alice.privateKey),
      ca: fs.readFileSync(path.join(pki, 'ca.pem'), 'utf8'),
    });
    // Alice's connection, a message signed by a key of an untrusted CA.
    const masked = new WsagClient(server.tlsUrl as string, tls, {
      key: stranger.privateKey,
      chain: [stranger.certificate],
    });
    const fault = await faultOf(masked.createAgreement(offer));
    expect(fault.code).toBe('NotAuthenticated');
    expect(fault.description).toMatch(/WS-Security: the signing certificate is not accepted/);
    // Both proofs good: the connection's identity acts.
    const both = new WsagClient(server.tlsUrl as string, tls, { key: alice.privateKey, chain: [alice.certificate] });
    expect((await both.templates()).length).toBeGreaterThan(0);
  });

  describe('signed agreements', () => {
    const verify = (document: string) => {
      const trust = TrustStore.fromFile(path.join(pki, 'ca.pem'));
      return verifyAgreementSignatures(document, {
        validateChain: (chain, at) => trust.validate(chain, at),
        at: new Date(),
      });
    };

    it('the provider signs every agreement it creates; the initiator countersigns it later, with a proxy', async () => {
      const client = tlsClient(aliceProxy);
      const { agreementId } = await client.createAgreement(offer);
      const signed = await client.agreementDocument(agreementId);
      expect(verify(signed).provider.identity).toBe('/C=DE/O=wsag-demo/OU=hosts/CN=localhost');
      expect(verify(signed).initiator).toBeUndefined();

      const countersigned = countersign(signed, aliceProxy.privateKey, [aliceProxy.certificate, ...aliceProxy.chain]);
      await client.countersign(agreementId, countersigned);
      const stored = await client.agreementDocument(agreementId);
      expect(stored).toBe(countersigned);
      const both = verify(stored);
      expect(both.initiator?.identity).toBe('/C=DE/O=wsag-demo/OU=users/CN=alice');
      expect(both.provider.signatureValue).toBe(verify(signed).provider.signatureValue);
      expect((await faultOf(client.countersign(agreementId, countersigned))).code).toBe('InvalidStateTransition');
    });

    it('refuses a countersignature by another party, or over changed terms', async () => {
      const client = tlsClient(aliceProxy);
      const { agreementId } = await client.createAgreement(offer);
      const signed = await client.agreementDocument(agreementId);
      const byBob = countersign(signed, bob.privateKey, [bob.certificate]);
      expect((await faultOf(tlsClient(bob).countersign(agreementId, byBob))).code).toBe('NotAuthorized');
      expect((await faultOf(client.countersign(agreementId, byBob))).code).toBe('NotAuthorized');
      const changed = countersign(signed.replace('</wsag:Name>', 'x</wsag:Name>'), alice.privateKey, [
        alice.certificate,
      ]);
      const fault = await faultOf(client.countersign(agreementId, changed));
      expect(fault.code).toBe('SignatureInvalid');
      expect(fault.description).toMatch(/provider signature: digest mismatch/);
    });
  });
});
