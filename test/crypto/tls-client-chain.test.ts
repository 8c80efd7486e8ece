import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCredential, proxyFilePem } from '../../src/crypto/credentials.js';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { pemBlocks } from '../../src/crypto/pem.js';
import { issueProxy } from '../../src/crypto/proxy.js';
import { TrustStore, type ValidatedChain } from '../../src/crypto/trust-store.js';
import { temporaryDirectories } from './support/temp-dirs.js';

/** The client's chain as TLS hands it over: getPeerCertificate(true), linked through issuerCertificate. */
function peerChain(peer: PeerCertificate & { issuerCertificate?: PeerCertificate }): X509Certificate[] {
  const chain: X509Certificate[] = [];
  for (
    let current: typeof peer | undefined = peer;
    current?.raw && !chain.some((c) => c.raw.equals(current!.raw));
    current = current.issuerCertificate
  ) {
    chain.push(new X509Certificate(current.raw));
  }
  return chain;
}

describe('a proxy as TLS client certificate, validated by the trust store', () => {
  const tempDir = temporaryDirectories('wsag-tls-');
  const dir = tempDir();
  let server: https.Server;
  let url: string;
  let store: TrustStore;

  beforeAll(async () => {
    await createDemoPki({ dir, keyType: 'ec' });
    store = TrustStore.fromFile(path.join(dir, 'ca.pem'));
    // Node does not verify the client's chain (OpenSSL refuses proxies by default): the trust store does.
    server = https.createServer(
      {
        cert: fs.readFileSync(path.join(dir, 'server.pem')),
        key: fs.readFileSync(path.join(dir, 'server.key')),
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        let answer: ValidatedChain | { rejected: string };
        try {
          answer = store.validate(peerChain(socket.getPeerCertificate(true)), new Date());
        } catch (error) {
          answer = { rejected: (error as Error).message };
        }
        res.end(JSON.stringify('identity' in answer ? { identity: answer.identity, proxies: answer.proxies } : answer));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://localhost:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function get(cert: string, key: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      https
        .get(url, { ca: fs.readFileSync(path.join(dir, 'ca.pem')), cert, key, agent: false }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(JSON.parse(body)));
        })
        .on('error', reject);
    });
  }

  it("the server sees the proxy chain and gets alice's identity; the proxy of a proxy too", async () => {
    const alice = loadCredential(path.join(dir, 'alice.pem'), path.join(dir, 'alice.key'));
    const proxy = await issueProxy({ issuerCert: alice.certificate, issuerKey: alice.privateKey, hours: 1 });
    const file = proxyFilePem({ ...proxy, chain: [alice.certificate] });
    const certs = pemBlocks(file)
      .filter((b) => b.label === 'CERTIFICATE')
      .map((b) => b.text)
      .join('');
    const key = pemBlocks(file).find((b) => b.label === 'PRIVATE KEY')?.text ?? '';
    expect(await get(certs, key)).toEqual({ identity: '/C=DE/O=wsag-demo/OU=users/CN=alice', proxies: 1 });

    const second = await issueProxy({ issuerCert: proxy.certificate, issuerKey: proxy.privateKey, hours: 1 });
    const chain = [second.certificate, proxy.certificate, alice.certificate].map((c) => c.toString()).join('');
    expect(await get(chain, second.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())).toEqual({
      identity: '/C=DE/O=wsag-demo/OU=users/CN=alice',
      proxies: 2,
    });
  });

  it("a certificate from another CA is rejected with the rule's message", async () => {
    const otherDir = tempDir();
    await createDemoPki({ dir: otherDir, keyType: 'ec' });
    const answer = await get(
      fs.readFileSync(path.join(otherDir, 'bob.pem'), 'utf8'),
      fs.readFileSync(path.join(otherDir, 'bob.key'), 'utf8'),
    );
    expect(answer).toEqual({ rejected: expect.stringContaining('is not a trusted CA') });
  });
});
