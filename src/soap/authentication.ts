import { X509Certificate } from 'node:crypto';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import { NotAuthenticated } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import { verifyWsSecurity, type SignedMessage } from '../crypto/ws-security.js';
import { ns } from '../xml/namespaces.js';
import type { SoapRequest } from './envelope.js';

/**
 * Proves who sent a request; `undefined` when it carries no proof at all. Throws NotAuthenticated for a proof that
 * fails.
 */
export type IdentityProof = (req: IncomingMessage, soap: SoapRequest | undefined, now: Date) => string | undefined;

export interface AuthenticationOptions {
  /** How a request proves an identity, tried in order (TLS client certificate, then WS-Security). */
  proofs: IdentityProof[];
  /** Requests without any proof act as `anonymous` ('allow') or are refused ('deny'). */
  anonymous: 'allow' | 'deny';
  admins: string[];
}

/**
 * Who is calling. Every proof a request presents must pass (a bad certificate is never
 * downgraded to anonymous, and a failing signature is never masked by a good TLS
 * certificate); the first names the caller. One without a proof is the anonymous party, if
 * the site allows it.
 */
export function authenticator(
  options: AuthenticationOptions,
): (req: IncomingMessage, soap: SoapRequest | undefined, now: Date) => Caller {
  return (req, soap, now) => {
    // Each proof runs, so one that fails throws even when an earlier one passed.
    const proven = options.proofs.map((proof) => proof(req, soap, now));
    const caller = proven.find((identity) => identity !== undefined);
    if (caller !== undefined) return { identity: caller, isAdmin: options.admins.includes(caller) };
    if (options.anonymous === 'deny') {
      throw new NotAuthenticated(
        'this server serves authenticated parties only: connect over TLS with a client certificate (or proxy ' +
          'certificate) from a trusted CA, or sign the message with WS-Security',
      );
    }
    return { identity: 'anonymous', isAdmin: options.admins.includes('anonymous') };
  };
}

/** Validates a certificate chain (leaf first) against the trusted CAs; returns the chain's identity or throws. */
export type ChainValidator = (chain: X509Certificate[], at: Date) => { identity: string };

/** Chains seen on full handshakes, by their leaf, for resumed TLS sessions (at most this many). */
const resumedChainCache = 1000;

/**
 * The TLS client's certificate chain, leaf first. A resumed TLS session carries only the
 * leaf certificate: the chain its full handshake presented is remembered by the leaf's
 * fingerprint and given again (a standby forwards it whole; the leader validates it at
 * every request).
 */
export class ClientChains {
  private readonly chains = new Map<string, X509Certificate[]>();

  /**
   * The chain `req`'s TLS client presented (remembered when the session was resumed); empty without TLS or a
   * certificate.
   */
  of(req: IncomingMessage): X509Certificate[] {
    const socket = req.socket as Partial<TLSSocket>;
    if (!socket.encrypted || typeof socket.getPeerCertificate !== 'function') return [];
    const chain = peerChain(socket.getPeerCertificate(true));
    const leaf = chain[0];
    if (!leaf) return [];
    return chain.length === 1 ? (this.chains.get(leaf.fingerprint256) ?? chain) : chain;
  }

  /** Keeps a chain of a full handshake for the sessions resumed from it. */
  remember(chain: readonly X509Certificate[]): void {
    const leaf = chain[0];
    if (!leaf || chain.length < 2 || this.chains.get(leaf.fingerprint256)?.length === chain.length) return;
    if (this.chains.size >= resumedChainCache) this.chains.delete(this.chains.keys().next().value as string);
    this.chains.set(leaf.fingerprint256, [...chain]);
  }
}

/**
 * The TLS client certificate chain, validated with the RFC 3820 proxy rules (a resumed session's through ClientChains).
 */
export function tlsClientCertificate(validate: ChainValidator): IdentityProof {
  const chains = new ClientChains();
  return (req, _soap, now) => {
    const chain = chains.of(req);
    if (chain.length === 0) return undefined;
    try {
      const { identity } = validate(chain, now);
      chains.remember(chain);
      return identity;
    } catch (error) {
      throw new NotAuthenticated(
        `the TLS client certificate is not accepted: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
}

/** How a standby of a cluster hands its TLS caller's certificate chain to the planning leader (docs/deployment.md). */
export const forwardedChainHeader = 'x-wsag-client-chain';

/**
 * The TLS client's certificate chain (leaf first, base64 DER, comma-separated) as a standby forwards it; none without
 * TLS or a certificate.
 */
export function encodedClientChain(req: IncomingMessage, chains: ClientChains): string | undefined {
  const chain = chains.of(req);
  chains.remember(chain);
  return chain.length > 0 ? chain.map((c) => c.raw.toString('base64')).join(',') : undefined;
}

/**
 * A TLS client certificate chain forwarded by another instance of the cluster. It counts
 * only when the request's forward MAC held (`forwarded`, src/web/forwarded-requests.ts): a
 * caller cannot claim someone else's certificate by sending the header itself (a standby
 * drops callers' own copies).
 */
export function forwardedClientChain(
  validate: ChainValidator | undefined,
  forwarded: (req: IncomingMessage) => boolean,
): IdentityProof {
  return (req, _soap, now) => {
    const header = req.headers[forwardedChainHeader];
    if (header === undefined) return undefined;
    if (!forwarded(req)) {
      throw new NotAuthenticated(
        `the ${forwardedChainHeader} header is accepted only from another instance of this cluster, with a ` +
          `forward MAC made with WSAG_CLUSTER_SECRET`,
      );
    }
    try {
      if (!validate) throw new Error('this server trusts no CA (WSAG_CA_FILE)');
      const chain = String(header)
        .split(',')
        .map((der) => new X509Certificate(Buffer.from(der, 'base64')));
      return validate(chain, now).identity;
    } catch (error) {
      throw new NotAuthenticated(
        `the TLS client certificate is not accepted: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
}

/** The signed messages verified so far, by request: the endpoint then checks that each signature is used once. */
const signedMessages = new WeakMap<IncomingMessage, SignedMessage>();

/** What the request's WS-Security signature proved, once `wsSecuritySignature` verified it. */
export function signedMessageOf(req: IncomingMessage): SignedMessage | undefined {
  return signedMessages.get(req);
}

/** A WS-Security X.509 signature over the Body, the headers and a Timestamp (callers behind TLS terminators). */
export function wsSecuritySignature(validate: ChainValidator): IdentityProof {
  return (req, soap, now) => {
    if (!soap?.text || !soap.headers.some((h) => h.namespaceUri === ns.wsse && h.name === 'Security')) return undefined;
    const signed = verifyWsSecurity(soap.text, validate, now);
    if (signed) signedMessages.set(req, signed);
    return signed?.identity;
  };
}

/**
 * The certificates the client sent, leaf first, without repeats (Node links the chain through issuerCertificate; the
 * root points to itself).
 */
function peerChain(peer: PeerCertificate & { issuerCertificate?: PeerCertificate }): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let current: (PeerCertificate & { issuerCertificate?: PeerCertificate }) | undefined = peer;
  while (current?.raw && !seen.has(current.fingerprint256)) {
    seen.add(current.fingerprint256);
    chain.push(new X509Certificate(current.raw));
    current = current.issuerCertificate;
  }
  return chain;
}
