import { clusterStateJson, type ClusterState } from './cluster-state.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestListener } from 'node:http';
import express, { type Request, type Response } from 'express';
import { agreementStates } from '../domain/agreement.js';
import { MalformedMessage, NotAuthorized, UnknownResource } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import { liveHolds, negotiationStates } from '../domain/negotiation.js';
import type { PriceList } from '../domain/pricing.js';
import type { AccountService, VerdictCorrections } from '../engine/accounting/index.js';
import type { UsageRecording } from '../engine/accounting/index.js';
import type { VoUsage } from '../engine/accounting/index.js';
import type { AgreementService } from '../engine/agreements/index.js';
import type { ExecutionService } from '../engine/execution/index.js';
import type { NegotiationService } from '../engine/negotiation/index.js';
import type { NotificationService } from '../engine/execution/index.js';
import type { PlanningService } from '../engine/planning/index.js';
import type { AgreementSignatureVerifier, AuditEntry } from '../engine/ports.js';
import type { Subscription } from '../engine/execution/index.js';
import { soapPostsFirst, soapRouter, type EndpointOptions } from '../soap/http-endpoint.js';
import { accountsRouter } from './accounts.js';
import { lifecycleRouter, type LifecycleOptions } from './lifecycle.js';
import { negotiationRouter } from './json-negotiations.js';
import { openApiDocument } from './openapi/document.js';
import { usageRouter } from './usage.js';
import { voRouter } from './vo.js';
import { pricesRouter } from './prices.js';
import { metricsRouter, type Metrics } from './metrics.js';
import { agreementDetailRouter } from './agreement-detail.js';
import type { EventStream } from './events.js';
import { routesOf, type Route } from './route-list.js';
import { fairUseRouter } from './fair-use.js';
import type { FairUseStanding } from '../engine/fair-use/index.js';
import { checkpointUploadRouter, type CheckpointUploadOptions } from './checkpoint-upload.js';
import { declaredBodyWithin, errorBoundary } from './error-boundary.js';
import { listingQuery, sendListing, type ListingQuery } from './listing.js';
import { crossSiteGuard, hardeningHeaders } from './hardening.js';
import { sendProblem } from './problem.js';
import { planWindow } from './plan-window.js';
import {
  agreementSummary,
  negotiationSummary,
  nodeSummary,
  partyView,
  planEntries,
  replanSummary,
} from './summaries.js';

export interface AppOptions extends EndpointOptions {
  agreements: AgreementService;
  negotiations: NegotiationService;
  plan: PlanningService;
  /** Verifies agreement signatures against the trusted CAs; absent when the site has no CA file. */
  signatures?: AgreementSignatureVerifier;
  /** The run time: node failures drive it, post-runtime reports come from it. Absent: node events only re-plan. */
  execution?: ExecutionService;
  /** HTTP callback subscriptions per agreement. */
  notifications?: NotificationService;
  /** Receiving migrated jobs' checkpoints (PUT /api/agreements/ID/checkpoint). */
  checkpointUpload?: Omit<CheckpointUploadOptions, 'identify' | 'logger'>;
  /** The bank: accounts and their statements (/api/accounts). */
  accounts?: AccountService;
  /** Operators' corrections of false violations (POST /api/agreements/ID/corrections). */
  corrections?: VerdictCorrections;
  /** Usage records (/api/usage). */
  usage?: UsageRecording;
  /** VO usage SLAs (/api/vo). */
  shares?: Pick<VoUsage, 'standings'>;
  /** The published prices and the price curve (/api/prices). */
  prices?: PriceList;
  /** Fair use: what a party holds against the limits; absent when the site has none. */
  fairUse?: (party: string) => Promise<FairUseStanding>;
  /** Prometheus metrics (/metrics); SOAP requests are counted as they are answered. */
  metrics?: Metrics;
  /** Live changes for the dashboard (/api/events). */
  events?: EventStream;
  /** An agreement's audit entries, for its detail view. */
  history?: (agreementId: string) => Promise<AuditEntry[]>;
  /** Who plans, on an instance of a cluster (/api/cluster); absent: a single server. */
  cluster?: () => ClusterState;
  /** The agreement lifecycle over JSON (templates, create, terminate): what the SOAP ports call. */
  lifecycle?: Pick<LifecycleOptions, 'factory' | 'templates' | 'idempotency'>;
}

/** The dashboard's pages (ui/ in the package). */
const uiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../ui');

/** The HTTP application: SOAP ports, a health check, and JSON views for operators and the CLI. */
/** The application, and the routes it answers (`routes`, for the authorisation matrix). */
export function createApp(options: AppOptions): RequestListener & { routes(): Route[] } {
  const app = express();
  app.disable('x-powered-by');
  app.use(hardeningHeaders());
  // SOAP posts are checked on their own fast path (soapPostsFirst); the dashboard's pages change nothing.
  app.use(
    '/api',
    crossSiteGuard((req) => new URL(options.baseUrl(req)).origin),
  );
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const openApi = JSON.stringify(openApiDocument());
  app.get('/api/openapi.json', (_req, res) => {
    res.type('application/json').send(openApi);
  });
  const caller = (req: Request): Caller => options.identify(req, undefined, options.now());
  const fail = (res: Response, what: string, error: unknown): void => sendProblem(res, error, what, options.logger);
  const json = (what: string, produce: (req: Request) => Promise<unknown>) => async (req: Request, res: Response) => {
    try {
      res.json(await produce(req));
    } catch (error) {
      fail(res, what, error);
    }
  };
  // Paged listings: one more row than the page is read, to know whether a next page exists.
  const listing = <S extends string, T extends { id: string; createdAt: Date }>(
    path: string,
    states: readonly S[],
    list: (who: Caller, page: ListingQuery<S>) => Promise<T[]>,
    summary: (item: T) => unknown,
  ) =>
    app.get(path, async (req, res) => {
      try {
        const query = listingQuery(req, states);
        sendListing(req, res, query, await list(caller(req), { ...query, limit: query.limit + 1 }), summary);
      } catch (error) {
        fail(res, `listing ${path}`, error);
      }
    });
  listing('/api/agreements', agreementStates, (who, page) => options.agreements.list(who, page), agreementSummary);
  listing(
    '/api/negotiations',
    negotiationStates,
    (who, page) => options.negotiations.list(who, page),
    negotiationSummary,
  );
  app.get(
    '/api/negotiations/:id',
    json('reading a negotiation', async (req) =>
      negotiationSummary(await options.negotiations.get(String(req.params.id), caller(req))),
    ),
  );
  const operator = (req: Request, what: string): Caller => {
    const who = caller(req);
    if (!who.isAdmin)
      throw new NotAuthorized(
        `${what}: operators only (an operator is an identity the server lists in WSAG_ADMINS; a local server ` +
          `without TLS makes everyone one with WSAG_ADMINS=anonymous)`,
      );
    return who;
  };
  // What capacity is booked, by agreements and by preparatory holds: operators see everything, a party its own bookings
  // and others' as busy time.
  app.get(
    '/api/plan',
    json('reading the plan', async (req) => {
      const who = caller(req);
      const window = planWindow(req);
      const bookings = planEntries(options.plan, window);
      const problematic = options.plan.manager.problematic();
      if (who.isAdmin)
        return {
          scope: 'all',
          clusterNodes: options.plan.clusterNodes,
          total: options.plan.bookingCount,
          bookings,
          problematic,
        };
      const own = await ownBookings(who);
      return {
        scope: 'own',
        clusterNodes: options.plan.clusterNodes,
        total: bookings.length,
        bookings: partyView(bookings, own),
        problematic: problematic.filter((p) => own.has(p.id)),
      };
    }),
  );
  /** The bookings that are the caller's: its live agreements, and the holds of its negotiations. */
  const ownBookings = async (who: Caller): Promise<Set<string>> => {
    const agreements = await options.agreements.list(who, { state: ['Observed', 'Pending'] });
    const negotiations = await options.negotiations.list(who, { state: 'Open' });
    return new Set([
      ...agreements.map((a) => a.id),
      ...negotiations.flatMap((n) => liveHolds(n).map((o) => o.offerId)),
    ]);
  };
  // Who plans: this server alone, or the planning leader of a cluster and its last takeover.
  app.get(
    '/api/cluster',
    json('reading the cluster state', async (req) => {
      caller(req);
      return clusterStateJson(options.cluster?.() ?? { role: 'single' });
    }),
  );
  // The cluster's nodes, their properties and whether they are failed (offers name nodes, in jsdl:CandidateHosts);
  // operators report failures and repairs.
  app.get(
    '/api/nodes',
    json('listing the nodes', async (req) => {
      caller(req);
      return { nodes: options.plan.nodes().map(nodeSummary), failureRate: options.plan.failureRate(options.now()) };
    }),
  );
  for (const event of ['fail', 'repair'] as const) {
    app.post(
      `/api/nodes/:id/${event}`,
      json(`reporting a node ${event === 'fail' ? 'failure' : 'repair'}`, async (req) => {
        const who = operator(req, `reporting a node ${event === 'fail' ? 'failure' : 'repair'}`);
        const id = String(req.params.id);
        if (!options.plan.hasNode(id))
          throw new UnknownResource(`no node "${id}" in the cluster; GET /api/nodes lists them`);
        const execution = options.execution;
        if (execution) {
          // The run time stops the jobs on the node, the scheduler re-plans, the jobs get their new plans, P goes to
          // the Migration Controller.
          const outcome =
            event === 'fail'
              ? await execution.nodeFailed(id, who.identity)
              : await execution.nodeRepaired(id, who.identity);
          return {
            ...replanSummary(outcome, options.plan.manager.isFailed(id)),
            agreements: outcome.agreements,
            ...(outcome.migration ? { migration: outcome.migration } : {}),
          };
        }
        const now = options.now();
        const report = event === 'fail' ? options.plan.nodeFailed(id, now) : options.plan.nodeRepaired(id, now);
        await options.plan.settle(); // the moved, suspended and problematic bookings are stored before the answer
        return replanSummary(report, options.plan.manager.isFailed(id));
      }),
    );
  }
  // The post-runtime report (JSON; text with ?format=text), for the agreement's owner and operators.
  app.get('/api/agreements/:id/report', async (req, res) => {
    try {
      if (!options.execution)
        throw new UnknownResource('this server runs no jobs (WSAG_EXECUTOR=none): there are no post-runtime reports');
      const stored = await options.execution.report(String(req.params.id), caller(req));
      if (req.query.format === 'text') res.type('text/plain').send(stored.text);
      else res.json(stored.report);
    } catch (error) {
      fail(res, 'reading a post-runtime report', error);
    }
  });
  // HTTP callbacks: every change of the agreement's states is POSTed to each subscriber.
  const subscriptions = (): NotificationService => {
    if (!options.notifications) throw new UnknownResource('this server sends no notifications');
    return options.notifications;
  };
  const subscriptionJson = (s: Subscription) => ({
    id: s.id,
    agreementId: s.agreementId,
    url: s.url,
    subscriber: s.subscriber,
    createdAt: s.createdAt,
  });
  app.post(
    '/api/agreements/:id/subscriptions',
    declaredBodyWithin(16 * 1024),
    express.text({ type: () => true, limit: 16 * 1024 }),
    json('subscribing to an agreement', async (req) => {
      let body: unknown;
      try {
        body = JSON.parse(typeof req.body === 'string' ? req.body : '');
      } catch {
        throw new MalformedMessage('send a JSON body { "url": "http(s)://..." }');
      }
      const url = typeof body === 'object' && body !== null ? (body as { url?: unknown }).url : undefined;
      return subscriptionJson(await subscriptions().subscribe(String(req.params.id), url, caller(req)));
    }),
  );
  app.get(
    '/api/agreements/:id/subscriptions',
    json('listing subscriptions', async (req) =>
      (await subscriptions().list(String(req.params.id), caller(req))).map(subscriptionJson),
    ),
  );
  app.delete('/api/agreements/:id/subscriptions/:subscription', async (req, res) => {
    try {
      await subscriptions().unsubscribe(String(req.params.id), String(req.params.subscription), caller(req));
      res.status(204).end();
    } catch (error) {
      fail(res, 'removing a subscription', error);
    }
  });
  if (options.checkpointUpload) {
    app.use(checkpointUploadRouter({ ...options.checkpointUpload, identify: caller, logger: options.logger }));
  }
  // The agreement document as stored (signed by the provider, countersigned when the initiator did).
  app.get('/api/agreements/:id/document', async (req, res) => {
    try {
      res.type('application/xml').send((await options.agreements.get(String(req.params.id), caller(req))).document);
    } catch (error) {
      fail(res, 'reading an agreement document', error);
    }
  });
  app.put(
    '/api/agreements/:id/countersignature',
    declaredBodyWithin(options.maxBodyBytes),
    express.text({ type: ['application/xml', 'text/xml'], limit: options.maxBodyBytes }),
    json('countersigning an agreement', async (req) => {
      if (!options.signatures)
        throw new NotAuthorized(
          'this server has no trusted CA file (WSAG_CA_FILE), so it cannot check countersignatures',
        );
      if (typeof req.body !== 'string' || req.body === '')
        throw new MalformedMessage(
          'send the countersigned agreement document as the body, Content-Type application/xml',
        );
      return agreementSummary(
        await options.agreements.countersign(String(req.params.id), req.body, caller(req), options.signatures),
      );
    }),
  );
  for (const decision of ['Accept', 'Reject'] as const) {
    app.post(
      `/api/agreements/:id/${decision.toLowerCase()}`,
      json(`deciding a pending agreement`, async (req) =>
        agreementSummary(await options.agreements.decide(String(req.params.id), decision, caller(req))),
      ),
    );
  }
  if (options.lifecycle) {
    const lifecycle = {
      ...options.lifecycle,
      agreements: options.agreements,
      negotiations: options.negotiations,
      maxBodyBytes: options.maxBodyBytes,
      baseUrl: (req: Request) => options.baseUrl(req),
      now: options.now,
    };
    app.use(lifecycleRouter(lifecycle, caller, options.logger));
    app.use(negotiationRouter(lifecycle, caller, options.logger));
  }
  if (options.accounts) app.use(accountsRouter(options.accounts, caller, options.logger));
  if (options.usage) app.use(usageRouter(options.usage, caller, options.logger));
  app.use(voRouter(options.shares, caller, options.now, options.logger));
  if (options.prices) app.use(pricesRouter(options.prices, options.plan, caller, options.now, options.logger));
  app.use(fairUseRouter(options.fairUse, caller, options.logger));
  if (options.metrics) app.use(metricsRouter(options.metrics, caller, options.logger));
  if (options.events) app.use(options.events.router(caller, options.logger));
  app.use(
    agreementDetailRouter(
      {
        agreements: options.agreements,
        ...(options.history ? { history: options.history } : {}),
        ...(options.signatures ? { signatures: options.signatures } : {}),
        ...(options.corrections ? { corrections: options.corrections } : {}),
        now: options.now,
      },
      caller,
      options.logger,
    ),
  );
  // The dashboard: static pages that read /api (docs/operations.md, "Dashboard").
  app.get('/', (_req, res) => res.redirect('/ui/'));
  app.use('/ui', express.static(uiDir, { index: 'index.html', fallthrough: true }));
  const metrics = options.metrics;
  const soap: EndpointOptions = metrics ? { ...options, onRequest: (done) => metrics.request(done) } : options;
  app.use(soapRouter(soap));
  app.use((req, res) => {
    if (req.path === '/api' || req.path.startsWith('/api/')) {
      sendProblem(
        res,
        new UnknownResource(`no ${req.method} ${req.path} in the API; docs/cli.md lists the routes`),
        'routing',
      );
      return;
    }
    res
      .status(404)
      .type('text/plain')
      .send('not found: SOAP ports live under /wsag/, e.g. /wsag/AgreementFactory?wsdl\n');
  });
  app.use(errorBoundary({ soapPaths: options.ports.map((p) => p.path), now: options.now, logger: options.logger }));
  return Object.assign(soapPostsFirst(soap, app), { routes: () => routesOf(app, options.ports) });
}
