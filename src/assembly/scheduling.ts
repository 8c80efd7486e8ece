import path from 'node:path';
import { clusterDescription } from '../engine/configuration/index.js';
import { PlanningService } from '../engine/planning/index.js';
import { slurmCluster } from '../runtime/slurm/slurm-plan-sync.js';
import { SlurmSite } from '../runtime/slurm/slurm-site.js';
import type { Foundations } from './foundations.js';

/**
 * With peers but no configured budget, Full jobs are not limited by the scheduler's count of standby nodes: each holds
 * its own at a peer (RemoteStandby).
 */
const standbyAtPeersBudget = 1_000_000;

/** The planning scheduler over the site's nodes, and Slurm when the nodes are Slurm's. */
export interface Scheduling {
  plan: PlanningService;
  slurm?: SlurmSite;
}

export async function schedulingParts(base: Foundations): Promise<Scheduling> {
  const { config, clock, logger, observed } = base;
  // WSAG_EXECUTOR=slurm: the nodes are Slurm's (docs/operations.md "Slurm").
  const cluster =
    config.executor === 'slurm'
      ? await slurmCluster(config.slurm ?? {}, clusterDescription(config))
      : clusterDescription(config);
  if (base.peers && base.peers.peers.length > 0 && cluster.peerStandbyNodes === 0)
    cluster.peerStandbyNodes = standbyAtPeersBudget;
  // Under Slurm, agreements may name what they run, among the executables the site allows.
  const applications =
    config.executor === 'slurm'
      ? { runsApplications: true, executablePrefixes: config.slurm?.executables ?? [] }
      : undefined;
  const plan = new PlanningService(cluster, base.prices, config.planningHorizonDays * 86_400, applications);
  plan.interactiveStartSeconds = config.interactiveStartSeconds;
  plan.onReplan = (cause, seconds, report) => observed.replanned(cause, seconds, report);
  base.late.plan = plan;
  const slurm =
    config.executor === 'slurm'
      ? new SlurmSite(config.slurm ?? {}, {
          plan,
          now: () => clock.now(),
          jobsDirectory: path.join(config.checkpointDir, 'jobs'),
          cpuTimeScale: config.cpuTimeScale,
          log: logger,
        })
      : undefined;
  return { plan, ...(slurm ? { slurm } : {}) };
}
