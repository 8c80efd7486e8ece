import type { MigrationPolicy, MigrationScope } from '../../domain/terms.js';
import type { MigrationJob } from './migration-jobs.js';
import type { LocalSite, Peer, ProviderMigrationPolicy } from './peers.js';

/**
 * The two policies of cross-border migration (Hovestadt 2006, sections 3.6.1 and 3.6.2): the
 * provider's decides which jobs may leave and to which peers; the customer's, agreed in the
 * SLA, may only narrow it ("prohibition always overrules admission").
 */

/** Where a job may go: peers in our administrative domain only, or any peer (the Grid). */
export type TargetScope = Exclude<MigrationScope, 'None'>;

const breadth: Record<MigrationScope, number> = { None: 0, AdministrativeDomain: 1, Grid: 2 };

/**
 * Step 1 for one job (`problematic`: it is in P): why the provider's policy keeps it
 * here, or undefined if it may leave. Running fixed reservations never leave (002 section 3.6.1: it "would interrupt
 * the currently ongoing execution ... and might cause side effects on other branches of a
 * workflow"), nor do jobs without an SLA promise (best effort, background).
 */
export function providerRefusal(
  job: MigrationJob,
  problematic: boolean,
  policy: ProviderMigrationPolicy,
): string | undefined {
  if (policy.scope === 'None') return "the provider's policy turns migration off (scope None)";
  if (job.kind === 'Reservation' && job.running) return 'a running fixed reservation is never migrated';
  if (job.kind === 'BestEffort' || job.kind === 'Background')
    return `a ${job.kind === 'BestEffort' ? 'best-effort' : 'background'} job has no promise a migration could keep`;
  if (!policy.levels.includes(job.request.guaranteeLevel))
    return `the provider migrates only ${policy.levels.join(', ')} jobs, not ${job.request.guaranteeLevel}`;
  if (policy.candidates === 'problematic' && !problematic) return 'the provider migrates only problematic jobs';
  if (policy.excludeAgreements.includes(job.agreementId)) return "the agreement is on the provider's exclude list";
  if (policy.includeAgreements && !policy.includeAgreements.includes(job.agreementId))
    return "the agreement is not on the provider's include list";
  if (policy.excludeTemplates.includes(job.templateName))
    return `template ${job.templateName} is on the provider's exclude list`;
  if (policy.includeTemplates && !policy.includeTemplates.includes(job.templateName))
    return `template ${job.templateName} is not on the provider's include list`;
  return undefined;
}

/** Step 1 for one target: why the provider's policy keeps the job from `peer`, or undefined. */
export function providerTargetRefusal(
  job: Pick<MigrationJob, 'checkpointMB'>,
  peer: Peer,
  policy: ProviderMigrationPolicy,
  local: LocalSite,
): string | undefined {
  if (policy.excludePeers.includes(peer.name)) return "on the provider's exclude list";
  if (policy.includePeers && !policy.includePeers.includes(peer.name)) return "not on the provider's include list";
  const inDomain = isInOurDomain(peer, local);
  if (policy.scope === 'AdministrativeDomain' && !inDomain)
    return 'outside our administrative domain, and the provider migrates only inside it';
  if (!inDomain && policy.maxGridCheckpointMB !== undefined && job.checkpointMB > policy.maxGridCheckpointMB) {
    return (
      `outside our administrative domain, and the checkpoint (${Math.ceil(job.checkpointMB)} MB) exceeds ` +
      `the provider's maximum for Grid peers (${policy.maxGridCheckpointMB} MB)`
    );
  }
  return undefined;
}

/**
 * Step 2 for one job: the scope the customer allows, narrowed by the provider's; or why
 * the job may not leave at all. An SLA that states no migration policy leaves the choice
 * to the provider.
 */
export function customerScope(
  policy: MigrationPolicy | undefined,
  provider: MigrationScope,
): { scope: TargetScope } | { refusal: string } {
  if (policy?.scope === 'None')
    return { refusal: 'the SLA forbids migration (sla:MigrationPolicy Scope None): prohibition overrules admission' };
  const customer = policy?.scope ?? 'Grid';
  const scope = breadth[customer] <= breadth[provider] ? customer : provider;
  return scope === 'None' ? { refusal: "the provider's policy turns migration off (scope None)" } : { scope };
}

/**
 * Step 2 for one target: why the customer's policy keeps the job from `peer`, or
 * undefined. Include and exclude entries name a site or an administrative domain (URIs in
 * the SLA): a peer matches an entry equal to its name, its domain, its factory URL or that
 * URL's origin. An exclusion overrules an inclusion.
 */
export function customerTargetRefusal(
  policy: MigrationPolicy | undefined,
  scope: TargetScope,
  peer: Peer,
  local: LocalSite,
): string | undefined {
  if (scope === 'AdministrativeDomain' && !isInOurDomain(peer, local)) {
    return (
      `outside our administrative domain (${local.domain ?? 'none configured'}), and the SLA allows ` +
      `migration only inside it`
    );
  }
  const names = peerNames(peer);
  const excluded = policy?.exclude.find((entry) => names.has(entry));
  if (excluded !== undefined) return `excluded by the SLA's migration policy (${excluded})`;
  if (policy && policy.include.length > 0 && !policy.include.some((entry) => names.has(entry))) {
    return `not among the sites the SLA's migration policy includes (${policy.include.join(', ')})`;
  }
  return undefined;
}

export function isInOurDomain(peer: Peer, local: LocalSite): boolean {
  return local.domain !== undefined && peer.domain === local.domain;
}

function peerNames(peer: Peer): Set<string> {
  const names = new Set([peer.name, peer.factoryUrl, new URL(peer.factoryUrl).origin]);
  if (peer.domain !== undefined) names.add(peer.domain);
  return names;
}
