import type { Logger } from 'pino';
import type { AgreementChange } from '../engine/agreements/index.js';
import type { ReplanCause } from '../engine/planning/index.js';
import type { AgreementRepository } from '../engine/ports.js';
import type { ReplanReport } from '../scheduler/model.js';
import { EventStream } from '../web/events.js';
import { Metrics, type MetricsSources } from '../web/metrics.js';

/**
 * What the server tells its watchers (docs/operations.md, "Metrics" and "Dashboard"): every
 * agreement change and re-plan is counted in the metrics, logged with its ids, and sent to
 * the dashboards following /api/events, so all three tell one story.
 */
export class Observability {
  readonly metrics: Metrics;
  readonly events = new EventStream();

  constructor(
    sources: () => MetricsSources,
    private readonly logger: Logger,
  ) {
    this.metrics = new Metrics(sources);
  }

  /** The agreement store with its writes timed. */
  timed(inner: AgreementRepository): AgreementRepository {
    return this.metrics.timed(inner);
  }

  agreementChanged(change: AgreementChange): void {
    this.metrics.agreementChanged(change, this.logger);
    this.events.agreementChanged(change);
  }

  replanned(cause: ReplanCause, seconds: number, report: ReplanReport): void {
    this.metrics.replanned(cause, seconds, report, this.logger);
    this.events.replanned(cause, report.moved);
  }
}
