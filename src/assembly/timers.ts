import fs from 'node:fs';
import { isFinal } from '../domain/agreement-state-machine.js';
import { LeaseNotices } from '../engine/execution/index.js';
import { checkpointFileOf } from '../web/checkpoint-upload.js';
import type { Foundations } from './foundations.js';
import type { RunTime } from './run-time.js';
import type { Scheduling } from './scheduling.js';
import type { Restored, Services } from './services.js';

/** How often held preparatory reservations are checked for expiry, and the plan's clock moves on. */
const expiryIntervalMs = 1000;
/** How often peers are asked about the jobs that moved to them. */
const followMigratedIntervalMs = 30_000;

type Assembled = Foundations & Scheduling & Services & RunTime & Restored;

/**
 * What runs on its own once the server serves: the one-second tick (holds and agreements
 * expiring, the plan's clock, lease notices, Slurm's reservations), Slurm's node reports,
 * and the jobs that moved to peers. Returns what stops them.
 */
export function startTimers(base: Assembled, leases: LeaseNotices): () => void {
  const { logger, clock, plan, slurm, execution, negotiations, expiration, migrated } = base;
  // Slurm reports node failures and repairs as an operator would through /api/nodes/ID/fail and /repair.
  slurm?.watch(
    {
      down: async (node, reason) => {
        if (!plan.hasNode(node)) return;
        const outcome = await execution.nodeFailed(node, 'slurm');
        logger.warn(
          { node, reason, moved: outcome.moved, problematic: outcome.problematic },
          'Slurm reports a node failed: re-planned',
        );
      },
      up: async (node) => {
        if (!plan.hasNode(node)) return;
        const outcome = await execution.nodeRepaired(node, 'slurm');
        logger.info({ node, moved: outcome.moved }, 'Slurm reports a node available again: re-planned');
      },
    },
    base.executorKind === 'slurm',
  );
  let advancing = false;
  const tick = setInterval(() => {
    negotiations.expireDue().then(
      (expired) => expired > 0 && logger.info({ expired }, 'preparatory reservations expired; fees charged'),
      (error: unknown) => logger.error({ err: error }, 'releasing expired holds failed'),
    );
    expiration.expireDue(clock.now()).then(
      (ended) =>
        ended.length > 0 &&
        logger.info({ agreements: ended }, 'agreements reached their wsag:ExpirationTime: ended, capacity released'),
      (error: unknown) => logger.error({ err: error }, 'ending expired agreements failed'),
    );
    if (!advancing) {
      advancing = true;
      execution
        .advance(clock.now())
        .then(
          (report) => report && logger.warn({ report }, 'a node is still failed after the problem horizon: re-planned'),
          (error: unknown) => logger.error({ err: error }, "moving the plan's clock failed"),
        )
        .finally(() => {
          advancing = false;
        });
    }
    void plan.settle();
    slurm?.tick();
    void leases
      .noticeDue(clock.now())
      .catch((error: unknown) => logger.error({ err: error }, 'sending lease notices failed'));
  }, expiryIntervalMs);
  tick.unref();
  // Jobs that moved to peers: their agreements here complete once the peers' are over.
  const following =
    migrated &&
    setInterval(() => {
      migrated.check().then(
        (completed) => completed.length > 0 && logger.info({ completed }, 'migrated jobs ended at their peers'),
        (error: unknown) => logger.error({ err: error }, 'following migrated jobs failed'),
      );
    }, followMigratedIntervalMs);
  following?.unref();
  return () => {
    clearInterval(tick);
    if (following) clearInterval(following);
  };
}

/** Leases: their holders hear before their windows end (docs/leases.md). */
export function leaseNotices(base: Assembled): LeaseNotices {
  const leases = new LeaseNotices(
    base.config.leaseNoticeSeconds,
    (id) => base.repository.get(id),
    (agreement, end) => base.notifications.leaseEnding(agreement, end),
  );
  for (const { id, end } of base.leaseEnds) leases.watchEnd(id, end);
  return leases;
}

/**
 * From here on, every stored change of an agreement reaches the metrics, leases, the run time, notifications, the books
 * and the expiry watch.
 */
export function followChanges(base: Assembled, leases: LeaseNotices): void {
  base.repository.onChange((change) => {
    base.observed.agreementChanged(change);
    leases.watch(change.after);
    base.execution.agreementChanged(change);
    base.notifications.agreementChanged(change);
    base.accounting.agreementChanged(change);
    base.expiration.watch(change.after);
    base.fairUse?.changed(change.after);
    // A checkpoint received for an agreement that has ended is of no more use: it does not stay on the disk.
    if (isFinal(change.after.state) && change.before?.state !== change.after.state) {
      fs.promises
        .rm(checkpointFileOf(base.receivedDir, change.after.id), { force: true })
        .catch((error: unknown) =>
          base.logger.warn({ err: error, agreementId: change.after.id }, 'a received checkpoint could not be removed'),
        );
    }
  });
}
