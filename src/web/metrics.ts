import { registerClusterGauges, type ClusterState } from './cluster-state.js';
import express, { type Request, type Router } from 'express';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { agreementStates, type Agreement, type AgreementState } from '../domain/agreement.js';
import { fairUseLimitNames, type FairUseLimit } from '../domain/fair-use.js';
import type { Caller } from '../domain/identity.js';
import type { AgreementChange } from '../engine/agreements/index.js';
import type { PlanningService, ReplanCause } from '../engine/planning/index.js';
import type { AgreementFilter, AgreementRepository, AuditNote } from '../engine/ports.js';
import type { ReplanReport } from '../scheduler/model.js';
import type { DocumentWorkDone } from '../workers/document-threads.js';
import { sendProblem } from './problem.js';

/** Seconds: from a fast SOAP answer or store write to a slow re-plan. */
const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsSources {
  agreements: Pick<AgreementRepository, 'countByState'>;
  plan: PlanningService;
  now: () => Date;
  /** Who plans, on an instance of a cluster; absent: a single server. */
  cluster?: () => ClusterState;
}

/**
 * Metrics for the site's monitoring (docs/operations.md, "Metrics"), in Prometheus' text
 * format from prom-client: SOAP requests by operation and outcome with their latency and
 * their wait to start, the document work and its wait for a thread, agreements by state and
 * their state changes, open holds, the plan's load, re-plans and their duration, agreement
 * store writes, and the process (CPU, memory, event loop, GC).
 * The server tells it what happens; gauges are read when /metrics is scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'port' | 'operation' | 'outcome'>;
  private readonly latency: Histogram<'port' | 'operation'>;
  private readonly transitions: Counter<'from' | 'to'>;
  private readonly replans: Counter<'cause'>;
  private readonly replanSeconds: Histogram<'cause'>;
  private readonly writes: Histogram<'operation'>;
  private readonly startWaits: Histogram<'port'>;
  private readonly documentWork: Histogram<'work' | 'on'>;
  private readonly fairUseRefusals: Counter<'limit'>;

  /** `sources` is read at each scrape (the server builds the store before the plan). */
  constructor(sources: () => MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    registerClusterGauges(this.registry, () => sources().cluster?.() ?? { role: 'single' });
    this.requests = new Counter({
      name: 'wsag_soap_requests_total',
      help: 'SOAP requests answered, by port, operation and outcome (ok or the fault code)',
      labelNames: ['port', 'operation', 'outcome'],
      registers,
    });
    this.latency = new Histogram({
      name: 'wsag_soap_request_duration_seconds',
      help: 'Time to answer a SOAP request, by port and operation',
      labelNames: ['port', 'operation'],
      buckets,
      registers,
    });
    this.transitions = new Counter({
      name: 'wsag_agreement_transitions_total',
      help: 'Agreements created (from "none") and agreement state changes',
      labelNames: ['from', 'to'],
      registers,
    });
    this.replans = new Counter({
      name: 'wsag_replans_total',
      help: 'Re-plans of the schedule, by cause',
      labelNames: ['cause'],
      registers,
    });
    this.replanSeconds = new Histogram({
      name: 'wsag_replan_duration_seconds',
      help: 'Time the planning scheduler took to re-plan, by cause',
      labelNames: ['cause'],
      buckets,
      registers,
    });
    this.writes = new Histogram({
      name: 'wsag_store_write_seconds',
      help: 'Time to store an agreement durably with its audit entries (insert or update)',
      labelNames: ['operation'],
      buckets,
      registers,
    });
    this.startWaits = new Histogram({
      name: 'wsag_soap_request_start_wait_seconds',
      help:
        'Time a SOAP request waited to start once its body had arrived (requests start a few per turn of ' +
        'the event loop)',
      labelNames: ['port'],
      buckets,
      registers,
    });
    this.documentWork = new Histogram({
      name: 'wsag_document_work_seconds',
      help:
        'Time from asking to the answer for reading an offer or signing an agreement, waiting for a ' +
        'document thread included, by work and where it ran',
      labelNames: ['work', 'on'],
      buckets,
      registers,
    });
    this.fairUseRefusals = new Counter({
      name: 'wsag_fair_use_refusals_total',
      help: 'Requests refused because they would take a party past a fair-use limit, by limit',
      labelNames: ['limit'],
      registers,
    });
    for (const limit of fairUseLimitNames) this.fairUseRefusals.inc({ limit }, 0);
    new Gauge({
      name: 'wsag_agreements',
      help: 'Stored agreements by state',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await sources().agreements.countByState();
        for (const state of agreementStates) this.set({ state }, counts[state] ?? 0);
      },
    });
    new Gauge({
      name: 'wsag_holds_open',
      help: 'Preparatory holds (Acceptable offers) booked in the plan',
      registers,
      collect() {
        let holds = 0;
        // By key: building every booking's allocation (plan.booked) cost ~50 MB of garbage per scrape at 100,000 live
        // agreements.
        for (const key of sources().plan.bookingKeys()) if (key.startsWith('hold:')) holds++;
        this.set(holds);
      },
    });
    new Gauge({
      name: 'wsag_plan_load',
      help:
        'Share of the SLA capacity (nodes that are not buffer nodes) firm bookings take, now and over ' +
        'the next hour',
      labelNames: ['period'],
      registers,
      collect() {
        const { plan, now: clock } = sources();
        const now = clock();
        this.set({ period: 'now' }, plan.load(now, new Date(now.getTime() + 1000)));
        this.set({ period: 'next_hour' }, plan.load(now, new Date(now.getTime() + 3600_000)));
      },
    });
    new Gauge({
      name: 'wsag_node_failure_rate',
      help:
        'Failures per node and day the planner weighs checkpoints against: the configured rate, moved by the ' +
        'failures seen since the server started',
      registers,
      collect() {
        const { plan, now } = sources();
        this.set(plan.failureRate(now()).perNodeDay);
      },
    });
    new Gauge({
      name: 'wsag_node_failures_seen',
      help: 'Node failures the planner has seen since the server started',
      registers,
      collect() {
        const { plan, now } = sources();
        this.set(plan.failureRate(now()).failures);
      },
    });
    new Gauge({
      name: 'wsag_node_group_failure_rate',
      help:
        'Failures per node and day the planner weighs the checkpoints of jobs on a failure group against: the ' +
        'configured rate, moved by the failures its nodes had since the server started',
      labelNames: ['group'],
      registers,
      collect() {
        const { plan, now } = sources();
        for (const g of plan.failureRate(now()).groups) this.set({ group: g.group }, g.perNodeDay);
      },
    });
    new Gauge({
      name: 'wsag_node_group_failures_seen',
      help: 'Node failures the planner has seen on a failure group since the server started',
      labelNames: ['group'],
      registers,
      collect() {
        const { plan, now } = sources();
        for (const g of plan.failureRate(now()).groups) this.set({ group: g.group }, g.failures);
      },
    });
    new Gauge({
      name: 'wsag_node_group_failure_events',
      help:
        'Failure events the planner has seen on a failure group since the server started: failures of its nodes ' +
        'within a minute of the first count once, as they hit a job once',
      labelNames: ['group'],
      registers,
      collect() {
        const { plan, now } = sources();
        for (const g of plan.failureRate(now()).groups) this.set({ group: g.group }, g.events);
      },
    });
    new Gauge({
      name: 'wsag_node_repair_median_hours',
      help:
        'The median time failed nodes stayed down, seen since the server started, apart for nodes that failed ' +
        'alone and with others of their failure group; 0 before any repair',
      labelNames: ['failed'],
      registers,
      collect() {
        const { plan, now } = sources();
        const times = plan.failureRate(now()).repairTimes;
        this.set({ failed: 'alone' }, times.alone.medianHours);
        this.set({ failed: 'with-others' }, times.withOthers.medianHours);
      },
    });
    new Gauge({
      name: 'wsag_node_recent_repair_failure_rate',
      help:
        'Failures per node and day of nodes within recentRepairHours of their repair, seen since the server ' +
        "started; once they are more than chance at the other nodes' rate, such nodes are chosen last",
      registers,
      collect() {
        const { plan, now } = sources();
        this.set(plan.failureRate(now()).recentRepairs.perNodeDay);
      },
    });
    new Gauge({
      name: 'wsag_plan_problems',
      help: 'Jobs in P: the scheduler cannot (yet) keep their promise',
      registers,
      collect() {
        this.set(sources().plan.manager.problematic().length);
      },
    });
  }

  request(done: {
    port: string;
    operation: string;
    outcome: string;
    seconds: number;
    startWaitSeconds?: number;
  }): void {
    this.requests.inc({ port: done.port, operation: done.operation, outcome: done.outcome });
    this.latency.observe({ port: done.port, operation: done.operation }, done.seconds);
    if (done.startWaitSeconds !== undefined) this.startWaits.observe({ port: done.port }, done.startWaitSeconds);
  }

  /** A reading or signing done by the document threads or on the event loop (DocumentThreads' `observe`). */
  fairUseRefused(limit: FairUseLimit): void {
    this.fairUseRefusals.inc({ limit });
  }

  documentWorkDone(done: DocumentWorkDone): void {
    this.documentWork.observe({ work: done.work, on: done.on }, done.seconds);
  }

  /** Counted, and logged with its ids, so logs and metrics tell one story. */
  agreementChanged(change: AgreementChange, logger: Logger): void {
    if (change.before?.state === change.after.state) return;
    const [from, to] = [change.before?.state ?? 'none', change.after.state];
    this.transitions.inc({ from, to });
    const actions = change.notes.map((n) => n.action);
    logger.info({ agreement: change.after.id, from, to, ...(actions.length ? { actions } : {}) }, 'agreement state');
  }

  /** Counted, timed and logged with the ids of what it changed. */
  replanned(cause: ReplanCause, seconds: number, report: ReplanReport, logger: Logger): void {
    this.replans.inc({ cause });
    this.replanSeconds.observe({ cause }, seconds);
    logger.info(
      {
        cause,
        ms: Math.round(seconds * 10_000) / 10,
        moved: report.moved,
        suspended: report.suspended,
        problematic: report.problematic.map((p) => p.id),
        solved: report.solved,
      },
      're-plan',
    );
  }

  /** The repository with its writes timed. */
  timed(inner: AgreementRepository): AgreementRepository {
    const writes = this.writes;
    const time = async (operation: 'insert' | 'update', write: () => Promise<void>) => {
      const started = performance.now();
      await write();
      writes.observe({ operation }, (performance.now() - started) / 1000);
    };
    return {
      insert: (agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void) =>
        time('insert', () => inner.insert(agreement, audit, committed)),
      update: (agreement: Agreement, audit?: readonly AuditNote[], committed?: () => void) =>
        time('update', () => inner.update(agreement, audit, committed)),
      get: (id: string) => inner.get(id),
      list: (filter?: AgreementFilter) => inner.list(filter),
      countByState: (): Promise<Partial<Record<AgreementState, number>>> => inner.countByState(),
      close: () => inner.close(),
    };
  }
}

/**
 * GET /metrics: Prometheus' text format, for any caller the site lets in (a scraper with a client certificate when TLS
 * is on).
 */
export function metricsRouter(metrics: Metrics, caller: (req: Request) => Caller, logger?: Logger): Router {
  const router = express.Router();
  router.get('/metrics', async (req, res) => {
    try {
      caller(req);
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    } catch (error) {
      sendProblem(res, error, 'reading the metrics', logger);
    }
  });
  return router;
}
