import express, { type Express, type Request, type Response } from 'express';
import { NotAuthorized, UnknownResource, WsagError } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { AgreementService } from '../engine/agreement-service.js';
import type { NegotiationService } from '../engine/negotiation-service.js';
import type { PlanningService } from '../engine/planning-service.js';
import { soapRouter, type EndpointOptions } from '../soap/http-endpoint.js';
import { agreementSummary, negotiationSummary, nodeSummary, planEntries, replanSummary } from './summaries.js';

export interface AppOptions extends EndpointOptions {
  agreements: AgreementService;
  negotiations: NegotiationService;
  plan: PlanningService;
}

/** The HTTP application: SOAP ports, a health check, and JSON views for operators and the CLI. */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const json = (what: string, produce: (req: Request) => Promise<unknown>) => async (req: Request, res: Response) => {
    try {
      res.json(await produce(req));
    } catch (error) {
      if (error instanceof WsagError && error.exposable) {
        res.status(error.code === 'NotAuthorized' ? 403 : error.code === 'UnknownResource' ? 404 : error.isClientError ? 400 : 409)
          .json({ error: error.code, message: error.message });
        return;
      }
      options.logger.error({ err: error }, `${what} failed`);
      res.status(500).json({ error: 'InternalError', message: `${what} failed; see the server log` });
    }
  };
  app.get('/api/agreements', json('listing agreements', async (req) => (await options.agreements.list(options.identify(req))).map(agreementSummary)));
  app.get('/api/negotiations', json('listing negotiations', async (req) => (await options.negotiations.list(options.identify(req))).map(negotiationSummary)));
  app.get('/api/negotiations/:id', json('reading a negotiation', async (req) =>
    negotiationSummary(await options.negotiations.get(String(req.params.id), options.identify(req)))));
  const operator = (req: Request, what: string): Caller => {
    const caller = options.identify(req);
    if (!caller.isAdmin) throw new NotAuthorized(`${what}: operators (admin role, WSAG_ADMINS) only`);
    return caller;
  };
  // What capacity is booked, by agreements and by preparatory holds (operators only: it shows everyone's bookings).
  app.get('/api/plan', json('reading the plan', async (req) => {
    operator(req, 'the plan shows every party\'s bookings');
    return { clusterNodes: options.plan.clusterNodes, bookings: planEntries(options.plan), problematic: options.plan.manager.problematic() };
  }));
  // The cluster's nodes, their properties and whether they are failed; operators report failures and repairs.
  app.get('/api/nodes', json('listing the nodes', async (req) => {
    operator(req, 'the nodes are the provider\'s');
    return { nodes: options.plan.nodes().map(nodeSummary) };
  }));
  for (const event of ['fail', 'repair'] as const) {
    app.post(`/api/nodes/:id/${event}`, json(`reporting a node ${event === 'fail' ? 'failure' : 'repair'}`, async (req) => {
      operator(req, `reporting a node ${event === 'fail' ? 'failure' : 'repair'}`);
      const id = String(req.params.id);
      if (!options.plan.hasNode(id)) throw new UnknownResource(`no node "${id}" in the cluster; GET /api/nodes lists them`);
      const now = options.now();
      const report = event === 'fail' ? options.plan.nodeFailed(id, now) : options.plan.nodeRepaired(id, now);
      await options.plan.settle(); // the moved, suspended and problematic bookings are stored before the answer
      return replanSummary(report, options.plan.manager.isFailed(id));
    }));
  }
  for (const decision of ['Accept', 'Reject'] as const) {
    app.post(`/api/agreements/:id/${decision.toLowerCase()}`, json(`deciding a pending agreement`, async (req) =>
      agreementSummary(await options.agreements.decide(String(req.params.id), decision, options.identify(req)))));
  }
  app.use(soapRouter(options));
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('not found: SOAP ports live under /wsag/, e.g. /wsag/AgreementFactory?wsdl\n');
  });
  return app;
}

