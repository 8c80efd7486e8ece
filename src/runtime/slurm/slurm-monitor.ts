import type { SlurmCli } from './slurm-cli.js';
import { outcomeOf, slurmJobs } from './slurm-jobs.js';
import { isUnavailable, slurmNodes } from './slurm-nodes.js';
import type { SlurmResourceManager } from './slurm-resource-manager.js';

export interface NodeEvents {
  /** Slurm reports the node DOWN, DRAIN or FAIL (or killed a job of ours for a node failure). */
  down(node: string, reason: string): Promise<void>;
  /** A node reported down is available in Slurm again. */
  up(node: string): Promise<void>;
}

/**
 * What Slurm knows that the plan must hear, polled on the server's tick: nodes
 * that go DOWN or DRAIN enter the failure path, as `/api/nodes/ID/fail` does, and come back
 * through the repair path; jobs that end are reported by the resource manager. Nodes are
 * read before jobs, so a job killed by a node failure is stopped as part of the outage
 * rather than reported as a failed application. A job Slurm ended NODE_FAIL on a node it
 * lists as up again is taken as that node's outage too (and its return).
 */
export class SlurmMonitor {
  /** Nodes this monitor reported down and has not reported up since. */
  private readonly down = new Set<string>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly cli: SlurmCli,
    private readonly partition: string | undefined,
    private readonly resourceManager: SlurmResourceManager | undefined,
    private readonly nodes: NodeEvents,
    private readonly onError: (error: unknown) => void,
  ) {}

  tick(): Promise<void> {
    this.running ??= this.poll()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** Waits for a poll under way (tests, shutdown). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async poll(): Promise<void> {
    for (const node of await slurmNodes(this.cli, this.partition)) {
      const unavailable = isUnavailable(node);
      if (unavailable && !this.down.has(node.name)) {
        this.down.add(node.name);
        await this.nodes.down(
          node.name,
          `Slurm reports it ${[node.state, ...(node.state_flags ?? [])].join('+')}` +
            `${node.reason ? `: ${node.reason}` : ''}`,
        );
      } else if (!unavailable && this.down.has(node.name)) {
        this.down.delete(node.name);
        await this.nodes.up(node.name);
      }
    }
    const rm = this.resourceManager;
    if (!rm) return;
    const listedAt = Date.now();
    const jobs = await slurmJobs(this.cli);
    for (const job of jobs) {
      const outcome = outcomeOf(job);
      const node = job.nodes.find((n) => !this.down.has(n));
      if (
        outcome.kind !== 'failed' ||
        !outcome.nodeFailure ||
        !rm.tracks(job.id) ||
        node === undefined ||
        job.nodes.some((n) => this.down.has(n))
      )
        continue;
      this.down.add(node);
      await this.nodes.down(node, outcome.reason);
    }
    await rm.observe(jobs, listedAt);
  }
}
