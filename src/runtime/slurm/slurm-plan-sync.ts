import os from 'node:os';
import type { Allocation } from '../../domain/allocation.js';
import type { ClusterDescription } from '../../scheduler/model.js';
import { SlurmCli } from './slurm-cli.js';
import { clusterNodeOf, slurmNodes } from './slurm-nodes.js';
import { plannedReservations, SlurmReservations, type ReconcileReport } from './slurm-reservations.js';

export interface SlurmSettings {
  conf?: string;
  partition?: string;
  user?: string;
}

/** The cluster Slurm describes, with the site's timing and peer settings of `base` (WSAG_EXECUTOR=slurm). */
export async function slurmCluster(settings: SlurmSettings, base: ClusterDescription): Promise<ClusterDescription> {
  const nodes = (await slurmNodes(new SlurmCli(cliOptions(settings)), settings.partition)).map(clusterNodeOf);
  if (nodes.length === 0) throw new Error(`Slurm reports no nodes${settings.partition ? ` in partition ${settings.partition}` : ''}: nothing to plan on`);
  return { ...base, nodes };
}

/**
 * Keeps Slurm's reservations equal to the plan: `tick` (the server's one-second timer)
 * reconciles when the plan's reservations changed since the last reconcile, and every 30 s
 * anyway (so anything changed in Slurm by hand is put right). One reconcile at a time.
 */
export class SlurmPlanSync {
  private readonly reservations: SlurmReservations;
  private last = '';
  private lastAt = 0;
  private running: Promise<void> | undefined;

  constructor(
    settings: SlurmSettings,
    private readonly booked: () => ReadonlyMap<string, Allocation>,
    private readonly onReport: (report: ReconcileReport) => void,
    private readonly onError: (error: unknown) => void,
  ) {
    this.reservations = new SlurmReservations(new SlurmCli(cliOptions(settings)), settings.user ?? os.userInfo().username);
  }

  tick(now: Date): Promise<void> {
    if (this.running) return this.running;
    const wanted = plannedReservations(this.booked(), now);
    const key = JSON.stringify(wanted);
    if (key === this.last && now.getTime() - this.lastAt < 30_000) return Promise.resolve();
    this.running = this.reservations.reconcile(wanted, now).then(
      (report) => {
        // A reservation Slurm refused is tried again next tick.
        this.last = report.failed.length === 0 ? key : '';
        this.lastAt = now.getTime();
        if (report.created.length + report.updated.length + report.deleted.length + report.failed.length > 0) this.onReport(report);
      },
      this.onError,
    ).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Waits for a reconcile under way (tests, shutdown). */
  async idle(): Promise<void> {
    await this.running;
  }
}

function cliOptions(settings: SlurmSettings) {
  return settings.conf ? { slurmConf: settings.conf } : {};
}
