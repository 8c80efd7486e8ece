import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import type {
  CheckpointData,
  PeerProviders,
  PeerQuote,
  PeerQuoteAnswer,
  PeerRequest,
  RemoteAgreement,
  RemoteAgreementState,
  StandbyHold,
} from '../engine/migration/index.js';
import type { Peer } from '../engine/migration/index.js';
import { acceptingOffer, negotiationOffer } from '../xml/accepting-offer.js';
import { chooseTemplate, peerOffer, peerTemplate } from './peer-offer.js';
import { WsagClient, type NegotiationReference } from './wsag-client.js';

/**
 * Peer providers over the WS-Agreement client (Hovestadt 2006, sections 3.6.6 and 4.2.4): a quote
 * is a negotiation with the peer (InitiateNegotiation, then a Solicited offer written from
 * one of the peer's templates), answered by the peer's committing (Acceptable) counter-offer
 * and its srv:Quote price; accepting is CreateAgreement with that offer's terms; declining
 * terminates the negotiation, which releases the peer's hold.
 *
 * Checkpoints go to a wsag-server peer over HTTP (the contract src/web/checkpoint-upload.ts
 * serves): `PUT {base}/api/agreements/{id}/checkpoint`, body the checkpoint's bytes
 * (application/octet-stream), header `x-checkpoint-sha256` their sha256 in hex; answered 204
 * once stored. Only the agreement's initiator (this provider) may upload.
 */

export interface PeerProvidersOptions {
  /** The fetch for a peer, e.g. one presenting our TLS client certificate; default the global fetch. */
  fetchFor?: (peer: Peer) => typeof fetch;
  /** OfferIds for the offers we send; default random. */
  offerId?: () => string;
}

/** The header that carries the checkpoint's sha256 (hex), checked by the receiver. */
export const checkpointDigestHeader = 'x-checkpoint-sha256';

/** Where a wsag-server takes checkpoints for one of its agreements, below its base URL. */
export function checkpointPath(agreementId: string): string {
  return `/api/agreements/${encodeURIComponent(agreementId)}/checkpoint`;
}

/** Where `peer` takes checkpoints for its agreement `agreementId`, or undefined when it cannot take any. */
export function checkpointUrl(peer: Peer, agreementId: string): string | undefined {
  if (peer.checkpointUrl) return peer.checkpointUrl.replaceAll('{agreementId}', encodeURIComponent(agreementId));
  return peer.kind === 'wsag-server' ? peer.factoryUrl + checkpointPath(agreementId) : undefined;
}

export class WsagPeerProviders implements PeerProviders {
  private readonly clients = new Map<string, WsagClient>();
  private readonly offerId: () => string;

  constructor(private readonly options: PeerProvidersOptions = {}) {
    this.offerId = options.offerId ?? (() => `m-${randomUUID().slice(0, 8)}`);
  }

  quote(peer: Peer, request: PeerRequest): Promise<PeerQuoteAnswer> {
    return this.committingOffer(peer, request);
  }

  reserveStandby(peer: Peer, request: PeerRequest): Promise<PeerQuoteAnswer> {
    return this.committingOffer(peer, request);
  }

  async accept(peer: Peer, quote: PeerQuote): Promise<RemoteAgreement> {
    const negotiation = { address: quote.negotiationAddress, negotiationId: quote.negotiationId };
    const created = await this.client(peer).createAgreement(acceptingOffer(quote.offer, { negotiation }));
    return { peer: peer.name, agreementId: created.agreementId, address: created.address };
  }

  bindStandby(peer: Peer, hold: StandbyHold): Promise<RemoteAgreement> {
    return this.accept(peer, hold);
  }

  async decline(peer: Peer, quote: PeerQuote): Promise<void> {
    await this.client(peer).terminateNegotiation(quote.negotiationId);
  }

  async terminate(peer: Peer, remote: RemoteAgreement, reason: string): Promise<void> {
    await this.client(peer).terminate(remote.agreementId, reason);
  }

  async agreementState(peer: Peer, remote: RemoteAgreement): Promise<RemoteAgreementState> {
    const { state, guaranteeTerms } = await this.client(peer).state(remote.agreementId);
    return { state, guaranteeTerms };
  }

  async transferCheckpoint(peer: Peer, remoteAgreementId: string, checkpoint: CheckpointData): Promise<void> {
    const url = checkpointUrl(peer, remoteAgreementId);
    if (!url)
      throw new Error(
        `peer ${peer.name} (${peer.kind}) has no checkpoint upload: set its checkpointUrl in the peers file`,
      );
    const { body, digest } = await checkpointBody(checkpoint);
    let response: Response;
    try {
      response = await this.fetch(peer)(url, {
        method: 'PUT',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(checkpoint.sizeBytes),
          [checkpointDigestHeader]: digest,
        },
        body,
        duplex: 'half',
      } as RequestInit);
    } catch (error) {
      const e = error as Error;
      throw new Error(`cannot reach ${url}: ${e.cause ? String(e.cause) : e.message}`);
    }
    if (response.status === 204 || response.status === 200) return;
    const text = await response.text();
    let message = `HTTP ${response.status}`;
    try {
      const problem = JSON.parse(text) as { error?: string; message?: string };
      if (problem.message) message = `${problem.error ?? 'error'}: ${problem.message}`;
    } catch {
      // not JSON: the status says enough
    }
    throw new Error(`peer ${peer.name} refused the checkpoint for agreement ${remoteAgreementId}: ${message}`);
  }

  /**
   * A negotiation ending in the peer's committing offer, or the peer's reason why not; a refusal leaves nothing open.
   */
  private async committingOffer(peer: Peer, { request, name }: PeerRequest): Promise<PeerQuoteAnswer> {
    const client = this.client(peer);
    const refuse = (reason: string): PeerQuoteAnswer => ({ quoted: false, reason: `${peer.name}: ${reason}` });
    let negotiation: NegotiationReference | undefined;
    const end = async () => {
      if (negotiation) await client.terminateNegotiation(negotiation.negotiationId).catch(() => undefined);
    };
    try {
      const template = chooseTemplate((await client.templates()).map(peerTemplate), request, peer.templateName);
      if ('reason' in template) return refuse(template.reason);
      const offer = peerOffer(template, request, name);
      negotiation = await client.initiateNegotiation();
      const answers = await client.negotiate(negotiation.negotiationId, [
        negotiationOffer(offer, { offerId: this.offerId(), counterOfferTo: template.id, state: 'Solicited' }),
      ]);
      const committing = answers.find((a) => a.state === 'Acceptable' && a.creator === 'NegotiationResponder');
      if (!committing) {
        await end();
        return refuse(
          `rejected: ${answers.find((a) => a.state === 'Rejected')?.note ?? 'no committing offer and no reason given'}`,
        );
      }
      if (!committing.price) {
        await end();
        return refuse('its committing offer states no price (srv:Quote), so it cannot be weighed against a penalty');
      }
      const quote: PeerQuote = {
        peer: peer.name,
        negotiationId: negotiation.negotiationId,
        negotiationAddress: negotiation.address || `${client.baseUrl}/wsag/Negotiation`,
        offerId: committing.offerId,
        price: committing.price,
        offer: committing.xml,
      };
      if (committing.fee) quote.fee = committing.fee;
      if (committing.expirationTime) quote.expiresAt = new Date(committing.expirationTime);
      return { quoted: true, quote };
    } catch (error) {
      await end();
      return refuse((error as Error).message);
    }
  }

  private fetch(peer: Peer): typeof fetch {
    return this.options.fetchFor?.(peer) ?? fetch;
  }

  /** One client per endpoint (a peer renamed in the configuration keeps its client; one moved gets a new one). */
  private client(peer: Peer): WsagClient {
    const key = `${peer.kind} ${peer.factoryUrl}`;
    let client = this.clients.get(key);
    if (!client) {
      client = clientFor(peer, this.fetch(peer));
      this.clients.set(key, client);
    }
    return client;
  }
}

/**
 * The WS-Agreement client addresses ports as {base}/wsag/{Port}. A wsag-server peer is
 * named by its base URL; a ws-agreement peer by its AgreementFactory endpoint, with the
 * other ports beside it, so requests are sent to the directory that endpoint is in.
 */
export function clientFor(peer: Peer, fetchImpl: typeof fetch): WsagClient {
  if (peer.kind === 'wsag-server') return new WsagClient(peer.factoryUrl, fetchImpl);
  const portDirectory = peer.factoryUrl.replace(/\/AgreementFactory$/, '');
  if (portDirectory.endsWith('/wsag')) return new WsagClient(portDirectory.slice(0, -'/wsag'.length), fetchImpl);
  const asCalled = `${portDirectory}/wsag/`;
  const rewritten: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return fetchImpl(url.startsWith(asCalled) ? `${portDirectory}/${url.slice(asCalled.length)}` : url, init);
  };
  return new WsagClient(portDirectory, rewritten);
}

/** The request body and its sha256: the bytes, or the file streamed (read once for the digest, once to send). */
async function checkpointBody(checkpoint: CheckpointData): Promise<{ body: BodyInit; digest: string }> {
  if (checkpoint.bytes) {
    if (checkpoint.bytes.byteLength !== checkpoint.sizeBytes)
      throw new Error(
        `the checkpoint holds ${checkpoint.bytes.byteLength} bytes, not the ${checkpoint.sizeBytes} it claims`,
      );
    return {
      body: new Uint8Array(checkpoint.bytes),
      digest: createHash('sha256').update(checkpoint.bytes).digest('hex'),
    };
  }
  if (!checkpoint.file) throw new Error('a checkpoint needs a file or bytes');
  const size = (await fs.promises.stat(checkpoint.file)).size;
  if (size !== checkpoint.sizeBytes)
    throw new Error(
      `checkpoint file ${checkpoint.file} holds ${size} bytes, not the ${checkpoint.sizeBytes} it claims`,
    );
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(checkpoint.file)) hash.update(chunk as Buffer);
  return {
    body: Readable.toWeb(fs.createReadStream(checkpoint.file)) as ReadableStream<Uint8Array>,
    digest: hash.digest('hex'),
  };
}
