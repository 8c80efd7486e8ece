import type { Allocation } from '../../domain/allocation.js';
import type { SlurmConfig } from '../../engine/configuration/index.js';
import type { ClusterDescription } from '../../scheduler/model.js';
import { SlurmCli } from './slurm-cli.js';
import { clusterNodeOf, slurmNodes } from './slurm-nodes.js';
import { plannedReservations, SlurmReservations, type ReconcileReport } from './slurm-reservations.js';

/** The cluster Slurm describes, with the site's timing and peer settings of `base` (WSAG_EXECUTOR=slurm). */
export async function slurmCluster(
  settings: Pick<SlurmConfig, 'conf' | 'partition'>,
  base: ClusterDescription,
): Promise<ClusterDescription> {
  const nodes = (
    await slurmNodes(new SlurmCli(settings.conf ? { slurmConf: settings.conf } : {}), settings.partition)
  ).map(clusterNodeOf);
  if (nodes.length === 0)
    throw new Error(
      `Slurm reports no nodes${settings.partition ? ` in partition ${settings.partition}` : ''}: nothing to plan on`,
    );
  return { ...base, nodes };
}

/** What the reservations follow: the plan's bookings. */
export interface PlannedBookings {
  /** Every booking, by key (an agreement id or `hold:<offer id>`). */
  booked(): ReadonlyMap<string, Allocation>;
  /** One booking. */
  allocationOf(key: string): Allocation | undefined;
  /** Changes to the bookings so far: while it stays the same, so do the bookings. */
  readonly bookingChanges: number;
}

/**
 * Keeps Slurm's reservations equal to the plan: `tick` (the server's one-second timer)
 * reconciles when the plan's reservations changed since the last reconcile, and every 30 s
 * anyway (so anything changed in Slurm by hand is put right). One reconcile at a time.
 * While the bookings do not change, a tick costs nothing: listing them is in proportion to
 * the live agreements.
 */
export class SlurmPlanSync {
  private readonly reservations: SlurmReservations;
  private last = '';
  private lastAt = 0;
  /** The plan's bookingChanges when `last` was taken (-1: reconcile at the next tick). */
  private lastChanges = -1;
  private running: Promise<ReconcileReport> | undefined;

  constructor(
    cli: SlurmCli,
    /** Who may run jobs in the reservations: the user the server submits as. */
    user: string,
    private readonly plan: PlannedBookings,
    private readonly onReport: (report: ReconcileReport) => void,
    private readonly onError: (error: unknown) => void,
  ) {
    this.reservations = new SlurmReservations(cli, user);
  }

  tick(now: Date): Promise<void> {
    if (this.running)
      return this.running.then(
        () => undefined,
        () => undefined,
      );
    const fresh = now.getTime() - this.lastAt < 30_000;
    if (fresh && this.plan.bookingChanges === this.lastChanges) return Promise.resolve();
    const key = JSON.stringify(plannedReservations(this.plan.booked(), now));
    if (fresh && key === this.last) {
      this.lastChanges = this.plan.bookingChanges;
      return Promise.resolve();
    }
    return this.reconcile(now).then(() => undefined, this.onError);
  }

  /**
   * The reservation a job's piece on `nodes` runs in, made to exist in Slurm now (a job is
   * submitted into it next): the plan's reservation of booking `key` that holds the nodes
   * and has not ended, the earliest if several.
   */
  async ensure(key: string, nodes: readonly string[], now: Date): Promise<string> {
    const allocation = this.plan.allocationOf(key);
    const reservation = (allocation ? plannedReservations(new Map([[key, allocation]]), now) : [])
      .filter((r) => nodes.every((n) => r.nodes.includes(n)))
      .sort((a, b) => a.start.getTime() - b.start.getTime())[0];
    if (!reservation)
      throw new Error(`the plan has no reservation for ${key} on ${nodes.join(',')} from ${now.toISOString()}`);
    while (this.running) await this.running.catch(() => undefined);
    const failed = (await this.reconcile(now)).failed.find((f) => f.name === reservation.name);
    if (failed) throw new Error(`Slurm refused reservation ${failed.name}: ${failed.error}`);
    return reservation.name;
  }

  /** One reconcile of Slurm with the plan as it is now; one at a time. */
  private reconcile(now: Date): Promise<ReconcileReport> {
    const changes = this.plan.bookingChanges;
    const wanted = plannedReservations(this.plan.booked(), now);
    const running = this.reservations
      .reconcile(wanted, now)
      .then((report) => {
        // A reservation Slurm refused is tried again next tick.
        this.last = report.failed.length === 0 ? JSON.stringify(wanted) : '';
        this.lastChanges = report.failed.length === 0 ? changes : -1;
        this.lastAt = now.getTime();
        if (report.created.length + report.updated.length + report.deleted.length + report.failed.length > 0)
          this.onReport(report);
        return report;
      })
      .finally(() => {
        this.running = undefined;
      });
    this.running = running;
    return running;
  }

  /** Waits for a reconcile under way (tests, shutdown). */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}
