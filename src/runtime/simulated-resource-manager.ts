import type { RuntimeClock } from './clock.js';
import type { JobLaunch, PreparedJob, ResourceManager, ResourceManagerEvent, StopReason } from './resource-manager.js';

export type ResourceManagerOperation = 'prepare' | 'start' | 'checkpoint' | 'stop' | 'stageOut' | 'cleanup';

/** One call as the simulated resource manager saw it. */
export interface SimulatedCall {
  op: ResourceManagerOperation;
  jobId: string;
  at: Date;
  nodes?: string[];
  restart?: boolean;
  fromCheckpoint?: string;
  reason?: StopReason;
  final?: boolean;
  /** The checkpoint reference returned. */
  reference?: string;
}

/**
 * A resource manager for tests and simulation: every call succeeds at once and is recorded;
 * a started job finishes after its `expectedRunMs` on the clock (times a factor, to play a
 * job that runs longer or shorter than planned). Failures are injected: a call that
 * rejects, or a job that fails or finishes now.
 */
export class SimulatedResourceManager implements ResourceManager {
  readonly calls: SimulatedCall[] = [];
  private readonly listeners = new Set<(event: ResourceManagerEvent) => void | Promise<void>>();
  private readonly running = new Map<string, () => void>();
  private readonly factors = new Map<string, number>();
  private readonly failures: Array<{ op: ResourceManagerOperation; jobId?: string; reason: string }> = [];
  private checkpoints = 0;

  constructor(private readonly clock: RuntimeClock) {}

  /** The job computes `factor` times as long as expected (1.2: 20 % slower than planned). */
  setRunFactor(jobId: string, factor: number): void {
    this.factors.set(jobId, factor);
  }

  /** The next `op` call (for `jobId`, or any job) rejects with `reason`. */
  failNext(op: ResourceManagerOperation, reason: string, jobId?: string): void {
    this.failures.push({ op, reason, ...(jobId !== undefined ? { jobId } : {}) });
  }

  /** The running job fails now (its own error, or a node failure the resource manager noticed). */
  async failJob(jobId: string, reason: string, node?: string): Promise<void> {
    this.halt(jobId);
    await this.emit({ type: 'failed', jobId, reason, ...(node !== undefined ? { node } : {}) });
  }

  /** The running job finishes now (earlier than expected). */
  async finishJob(jobId: string): Promise<void> {
    this.halt(jobId);
    await this.emit({ type: 'finished', jobId });
  }

  isRunning(jobId: string): boolean {
    return this.running.has(jobId);
  }

  /** Calls of one kind, for assertions. */
  callsOf(op: ResourceManagerOperation, jobId?: string): SimulatedCall[] {
    return this.calls.filter((c) => c.op === op && (jobId === undefined || c.jobId === jobId));
  }

  async prepare(job: PreparedJob): Promise<void> {
    this.record({ op: 'prepare', jobId: job.jobId, nodes: [...job.nodes], restart: job.restart });
  }

  async start(launch: JobLaunch): Promise<void> {
    this.record({
      op: 'start',
      jobId: launch.jobId,
      nodes: [...launch.nodes],
      ...(launch.fromCheckpoint !== undefined ? { fromCheckpoint: launch.fromCheckpoint } : {}),
    });
    if (this.running.has(launch.jobId)) throw new Error(`job ${launch.jobId} is already running`);
    const runMs = Math.round(launch.expectedRunMs * (this.factors.get(launch.jobId) ?? 1));
    const cancel = this.clock.at(new Date(this.clock.now().getTime() + runMs), () => {
      this.running.delete(launch.jobId);
      return this.emit({ type: 'finished', jobId: launch.jobId });
    });
    this.running.set(launch.jobId, cancel);
  }

  async checkpoint(jobId: string): Promise<string> {
    const call: SimulatedCall = { op: 'checkpoint', jobId, at: this.clock.now() };
    this.calls.push(call);
    this.injected('checkpoint', jobId);
    if (!this.running.has(jobId)) throw new Error(`job ${jobId} is not running`);
    call.reference = `sim://${jobId}/checkpoint-${++this.checkpoints}`;
    return call.reference;
  }

  async stop(jobId: string, reason: StopReason): Promise<void> {
    this.record({ op: 'stop', jobId, reason });
    this.halt(jobId);
  }

  async stageOut(jobId: string): Promise<void> {
    this.record({ op: 'stageOut', jobId });
  }

  async cleanup(jobId: string, final: boolean): Promise<void> {
    this.record({ op: 'cleanup', jobId, final });
  }

  onEvent(listener: (event: ResourceManagerEvent) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private record(call: Omit<SimulatedCall, 'at'>): void {
    this.calls.push({ ...call, at: this.clock.now() });
    this.injected(call.op, call.jobId);
  }

  /** Throws the first injected failure matching the call, once. */
  private injected(op: ResourceManagerOperation, jobId: string): void {
    const i = this.failures.findIndex((f) => f.op === op && (f.jobId === undefined || f.jobId === jobId));
    if (i < 0) return;
    const [failure] = this.failures.splice(i, 1);
    throw new Error(failure?.reason);
  }

  private halt(jobId: string): void {
    this.running.get(jobId)?.();
    this.running.delete(jobId);
  }

  private async emit(event: ResourceManagerEvent): Promise<void> {
    await Promise.all([...this.listeners].map((listener) => listener(event)));
  }
}
