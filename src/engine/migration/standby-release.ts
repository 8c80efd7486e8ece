import type { Agreement } from '../../domain/agreement.js';
import type { PeersConfig } from './peers.js';
import type { AuditLog } from '../ports.js';
import type { PeerProviders } from './ports.js';

/**
 * Ends the standby agreement a Full agreement bound at a peer (`standby-bound` on its audit
 * trail, see AgreementFactory's bindRemoteStandby) once the job's run is over here: the
 * peer need hold the capacity no longer. Nothing when there is none.
 */
export async function releaseBoundStandby(
  agreement: Agreement,
  deps: { audit: AuditLog; peers: PeersConfig; providers: PeerProviders },
): Promise<void> {
  if (agreement.request.guaranteeLevel !== 'Full') return;
  const entries = await deps.audit.entries({ subject: { kind: 'agreement', id: agreement.id } });
  const bound = entries.filter((e) => e.action === 'standby-bound').pop();
  if (!bound) return;
  const { peer: name, remoteAgreementId, remoteAddress } = bound.details;
  const peer = deps.peers.peers.find((p) => p.name === name);
  if (!peer || typeof remoteAgreementId !== 'string' || typeof remoteAddress !== 'string') return;
  await deps.providers.terminate(
    peer,
    { peer: peer.name, agreementId: remoteAgreementId, address: remoteAddress },
    `the job of agreement ${agreement.id} is over: its standby is no longer needed`,
  );
}
