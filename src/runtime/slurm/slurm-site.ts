import os from 'node:os';
import type { SlurmConfig } from '../../engine/configuration/index.js';
import { SlurmCli } from './slurm-cli.js';
import { SlurmMonitor, type NodeEvents } from './slurm-monitor.js';
import { SlurmPlanSync, type PlannedBookings } from './slurm-plan-sync.js';
import type { ReconcileReport } from './slurm-reservations.js';
import { SlurmResourceManager } from './slurm-resource-manager.js';

export interface SlurmSiteOptions {
  /** The plan's bookings. */
  plan: PlannedBookings;
  now: () => Date;
  /** Job directories (a file system the compute nodes share). */
  jobsDirectory: string;
  cpuTimeScale: number;
  log: {
    info(details: Record<string, unknown>, message: string): void;
    error(details: Record<string, unknown>, message: string): void;
  };
}

/**
 * Everything wsag-server runs against Slurm (WSAG_EXECUTOR=slurm, docs/operations.md
 * "Slurm"), assembled once: the plan's reservations (SlurmPlanSync), the resource manager
 * that runs jobs in them, and the monitor that brings node and job states back. `tick` is
 * the server's one-second timer.
 */
export class SlurmSite {
  readonly sync: SlurmPlanSync;
  readonly resourceManager: SlurmResourceManager;
  private monitor: SlurmMonitor | undefined;
  private readonly cli: SlurmCli;

  constructor(
    private readonly settings: SlurmConfig,
    private readonly options: SlurmSiteOptions,
  ) {
    this.cli = new SlurmCli(settings.conf ? { slurmConf: settings.conf } : {});
    this.sync = new SlurmPlanSync(
      this.cli,
      settings.user ?? os.userInfo().username,
      options.plan,
      (report: ReconcileReport) => options.log.info({ report }, 'Slurm reservations follow the plan'),
      (error) => options.log.error({ err: error }, 'updating Slurm reservations failed'),
    );
    this.resourceManager = new SlurmResourceManager({
      cli: this.cli,
      directory: options.jobsDirectory,
      ...(settings.partition ? { partition: settings.partition } : {}),
      reservationFor: (jobId, nodes) => this.sync.ensure(jobId, nodes, options.now()),
      cpuTimeScale: options.cpuTimeScale,
      ...(settings.checkpointSignal ? { checkpointSignal: settings.checkpointSignal } : {}),
      ...(settings.checkpointTimeoutSeconds ? { checkpointTimeoutMs: settings.checkpointTimeoutSeconds * 1000 } : {}),
      log: (message, details) => options.log.info(details, message),
    });
  }

  /** From now on node states and job ends come back from Slurm; `runsJobs` false: nodes only (no run time). */
  watch(nodes: NodeEvents, runsJobs: boolean): void {
    this.monitor = new SlurmMonitor(
      this.cli,
      this.settings.partition,
      runsJobs ? this.resourceManager : undefined,
      nodes,
      (error) => this.options.log.error({ err: error }, 'reading node and job states from Slurm failed'),
    );
  }

  tick(): void {
    void this.sync.tick(this.options.now());
    void this.monitor?.tick();
  }

  /** Waits for work under way (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all([this.sync.idle(), this.monitor?.idle()]);
  }
}
