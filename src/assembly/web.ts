import type { Caller } from '../domain/identity.js';
import type { Route } from '../web/route-list.js';
import { checkingForwards, wasForwarded } from '../web/forwarded-requests.js';
import { openNegotiations, type FairUse, type FairUseStanding } from '../engine/fair-use/index.js';
import { verifyAgreementSignatures } from '../crypto/xml-signature.js';
import { AuditService } from '../engine/audit/index.js';
import { AgreementFactory } from '../engine/agreements/index.js';
import { RemoteStandby } from '../engine/migration/index.js';
import { XmlAgreementWriter } from '../xml/agreement-writer.js';
import type { AgreementSignatureVerifier } from '../engine/ports.js';
import { agreementPorts, paths } from '../soap/agreement-ports.js';
import {
  authenticator,
  forwardedClientChain,
  tlsClientCertificate,
  wsSecuritySignature,
  type ChainValidator,
} from '../soap/authentication.js';
import { negotiationPaths, negotiationPorts } from '../soap/negotiation-ports.js';
import { requestBaseUrl, trustedProxies } from '../soap/request-address.js';
import { MemoryIdempotencyRecords } from '../store/memory-idempotency-records.js';
import { MemorySeenSignatures } from '../store/memory-seen-signatures.js';
import { createApp } from '../web/app.js';
import { checkpointFileOf, fileCheckpointStore } from '../web/checkpoint-upload.js';
import type { Foundations } from './foundations.js';
import type { RunTime } from './run-time.js';
import type { Scheduling } from './scheduling.js';
import type { Services } from './services.js';

/** The SOAP ports' addresses under a base URL. */
export const endpointsAt = (baseUrl: string): Record<string, string> =>
  Object.fromEntries(Object.entries({ ...paths, ...negotiationPaths }).map(([name, p]) => [name, baseUrl + p]));

/**
 * The faces (the SOAP ports, the JSON API, the dashboard, /metrics) behind the listeners,
 * with who may call: TLS client certificates, WS-Security signatures, a standby's forwarded
 * chain, or the anonymous party if the site allows it. Returns the SOAP endpoints and the
 * routes served.
 */
export function serveWeb(base: Foundations & Scheduling & Services & RunTime): {
  endpoints: Record<string, string>;
  routes: () => Route[];
} {
  const { config, trust, store, repository, execution, accounting, urls, front } = base;
  const validateChain: ChainValidator | undefined = trust && ((chain, at) => trust.validate(chain, at));
  const signatures: AgreementSignatureVerifier | undefined = validateChain && {
    verify: (document, at) => verifyAgreementSignatures(document, { validateChain, at }),
  };
  const fromTrustedProxy = trustedProxies(config.trustedProxies);
  const identify = authenticator({
    proofs: [
      forwardedClientChain(validateChain, wasForwarded),
      ...(validateChain ? [tlsClientCertificate(validateChain), wsSecuritySignature(validateChain)] : []),
    ],
    anonymous: config.anonymous,
    admins: config.admins,
  });
  const services = {
    factory: agreementFactory(base),
    agreements: base.agreements,
    negotiations: base.negotiations,
    templates: base.templates,
    offers: base.documents,
  };
  const app = createApp({
    ports: [...agreementPorts(services), ...negotiationPorts(services)],
    agreements: base.agreements,
    negotiations: base.negotiations,
    plan: base.plan,
    ...(signatures ? { signatures } : {}),
    maxBodyBytes: config.maxBodyBytes,
    maxXmlDepth: config.maxXmlDepth,
    bodiesReadElsewhere: () => base.documents.handsWorkOver,
    // EPRs name WSAG_PUBLIC_URL, else the address the client sent the request to (its Host,
    // or a trusted proxy's X-Forwarded-Host), else the port it came in on: HTTPS for TLS callers.
    baseUrl: (req) =>
      config.publicUrl !== undefined
        ? urls.base
        : ((req && requestBaseUrl(req, fromTrustedProxy)) ??
          (urls.tls && (req?.socket as { encrypted?: boolean } | undefined)?.encrypted ? urls.tls : urls.base)),
    identify,
    seenSignatures: store?.seenSignatures ?? new MemorySeenSignatures(),
    now: () => base.clock.now(),
    logger: base.logger,
    execution,
    notifications: base.notifications,
    accounts: accounting.accounts,
    corrections: accounting.corrections(base.agreements),
    usage: accounting.recording,
    ...(accounting.shares ? { shares: accounting.shares } : {}),
    prices: base.prices,
    ...(base.fairUse ? { fairUse: standingOf(base.fairUse, base) } : {}),
    metrics: base.observed.metrics,
    events: base.observed.events,
    ...(base.parts.cluster ? { cluster: base.parts.cluster } : {}),
    lifecycle: {
      factory: services.factory,
      templates: base.templates,
      idempotency: {
        records: store?.idempotency ?? new MemoryIdempotencyRecords(),
        ids: base.ids,
        now: () => base.clock.now(),
      },
    },
    ...(store
      ? { history: (id: string) => new AuditService({ audit: store.audit, agreements: repository }).history(id) }
      : {}),
    checkpointUpload: {
      agreement: (id) => repository.get(id),
      ...(base.fairUse
        ? {
            checkFairUse: (caller: Caller, id: string, bytes: number) =>
              base.fairUse?.checkCheckpoint(caller, id, bytes),
          }
        : {}),
      store: async (upload) => {
        await fileCheckpointStore(base.receivedDir)(upload);
        base.fairUse?.checkpointKept(upload.agreementId, upload.uploader, upload.sizeBytes);
        await execution.checkpointReceived(
          upload.agreementId,
          checkpointFileOf(base.receivedDir, upload.agreementId),
          upload,
        );
      },
      maxBytes: config.maxCheckpointBytes,
      tempDir: base.receivedDir,
    },
  });
  front.serve(
    checkingForwards(app, {
      ...(config.clusterSecret ? { secret: config.clusterSecret } : {}),
      maxBodyBytes: config.maxBodyBytes,
      now: () => new Date(),
      logger: base.logger,
    }),
  );
  if (!urls.base) urls.base = front.url;
  const tls = front.tlsUrl;
  if (tls) urls.tls = tls;
  return { endpoints: endpointsAt(urls.base), routes: app.routes };
}

/** What a party holds against the fair-use limits, its open negotiations counted from the store. */
function standingOf(
  fairUse: FairUse,
  base: Foundations & Scheduling & Services & RunTime,
): (party: string) => Promise<FairUseStanding> {
  return async (party) => {
    const now = base.clock.now();
    return fairUse.standing(
      party,
      now,
      await openNegotiations(party, now, base.config.negotiationMaxSeconds, base.negotiationRepository),
    );
  };
}

/** The CreateAgreement flow (src/engine/agreements/agreement-factory.ts) with the adapters it uses. */
function agreementFactory(base: Foundations & Scheduling & Services & RunTime): AgreementFactory {
  const { config, peers, providers, accounting, signer } = base;
  return new AgreementFactory({
    templates: base.templates,
    repository: base.repository,
    documents: new XmlAgreementWriter(),
    plan: base.plan,
    clock: base.clock,
    ids: base.ids,
    providerName: config.providerName,
    prices: base.prices,
    negotiations: base.negotiations,
    agreements: base.agreements,
    reservations: base.reservations,
    charging: accounting.charging,
    ...(accounting.shares ? { shares: accounting.shares } : {}),
    ...(base.fairUse ? { fairUse: base.fairUse } : {}),
    ...(signer ? { signer } : {}),
    termsRead: {
      know: (id, terms) => base.execution.knowTerms(id, terms),
      forget: (id) => base.execution.forgetTerms(id),
    },
    ...(peers && providers
      ? { standby: new RemoteStandby({ peers, providers, providerName: config.providerName }) }
      : {}),
  });
}
