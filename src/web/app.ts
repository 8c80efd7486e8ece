import express, { type Express, type Request, type Response } from 'express';
import { MalformedMessage, NotAuthorized, UnknownResource, WsagError } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import type { AgreementService } from '../engine/agreement-service.js';
import type { NegotiationService } from '../engine/negotiation-service.js';
import type { PlanningService } from '../engine/planning-service.js';
import type { AgreementSignatureVerifier } from '../engine/ports.js';
import { soapRouter, type EndpointOptions } from '../soap/http-endpoint.js';
import { agreementSummary, negotiationSummary, nodeSummary, planEntries, replanSummary } from './summaries.js';

export interface AppOptions extends EndpointOptions {
  agreements: AgreementService;
  negotiations: NegotiationService;
  plan: PlanningService;
  /** Verifies agreement signatures against the trusted CAs; absent when the site has no CA file. */
  signatures?: AgreementSignatureVerifier;
}

/** The HTTP application: SOAP ports, a health check, and JSON views for operators and the CLI. */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const caller = (req: Request): Caller => options.identify(req, undefined, options.now());
  const fail = (res: Response, what: string, error: unknown): void => {
    if (error instanceof WsagError && error.exposable) {
      res.status(error.code === 'NotAuthenticated' ? 401 : error.code === 'NotAuthorized' ? 403 : error.code === 'UnknownResource' ? 404 : error.isClientError ? 400 : 409)
        .json({ error: error.code, message: error.message });
      return;
    }
    options.logger.error({ err: error }, `${what} failed`);
    res.status(500).json({ error: 'InternalError', message: `${what} failed; see the server log` });
  };
  const json = (what: string, produce: (req: Request) => Promise<unknown>) => async (req: Request, res: Response) => {
    try {
      res.json(await produce(req));
    } catch (error) {
      fail(res, what, error);
    }
  };
  app.get('/api/agreements', json('listing agreements', async (req) => (await options.agreements.list(caller(req))).map(agreementSummary)));
  app.get('/api/negotiations', json('listing negotiations', async (req) => (await options.negotiations.list(caller(req))).map(negotiationSummary)));
  app.get('/api/negotiations/:id', json('reading a negotiation', async (req) =>
    negotiationSummary(await options.negotiations.get(String(req.params.id), caller(req)))));
  const operator = (req: Request, what: string): Caller => {
    const who = caller(req);
    if (!who.isAdmin) throw new NotAuthorized(`${what}: operators (admin role, WSAG_ADMINS) only`);
    return who;
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
  // The agreement document as stored (signed by the provider, countersigned when the initiator did).
  app.get('/api/agreements/:id/document', async (req, res) => {
    try {
      res.type('application/xml').send((await options.agreements.get(String(req.params.id), caller(req))).document);
    } catch (error) {
      fail(res, 'reading an agreement document', error);
    }
  });
  app.put('/api/agreements/:id/countersignature', express.text({ type: ['application/xml', 'text/xml'], limit: options.maxBodyBytes }), json('countersigning an agreement', async (req) => {
    if (!options.signatures) throw new NotAuthorized('this server has no trusted CA file (WSAG_CA_FILE), so it cannot check countersignatures');
    if (typeof req.body !== 'string' || req.body === '') throw new MalformedMessage('send the countersigned agreement document as the body, Content-Type application/xml');
    return agreementSummary(await options.agreements.countersign(String(req.params.id), req.body, caller(req), options.signatures));
  }));
  for (const decision of ['Accept', 'Reject'] as const) {
    app.post(`/api/agreements/:id/${decision.toLowerCase()}`, json(`deciding a pending agreement`, async (req) =>
      agreementSummary(await options.agreements.decide(String(req.params.id), decision, caller(req)))));
  }
  app.use(soapRouter(options));
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('not found: SOAP ports live under /wsag/, e.g. /wsag/AgreementFactory?wsdl\n');
  });
  return app;
}

