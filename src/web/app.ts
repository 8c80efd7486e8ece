import express, { type Express } from 'express';
import type { AgreementService } from '../engine/agreement-service.js';
import { soapRouter, type EndpointOptions } from '../soap/http-endpoint.js';

export interface AppOptions extends EndpointOptions {
  agreements: AgreementService;
}

/** The HTTP application: SOAP ports, a health check, and a JSON listing for operators and the CLI. */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/api/agreements', async (req, res) => {
    try {
      const list = await options.agreements.list(options.identify(req));
      res.json(
        list.map((a) => ({
          id: a.id,
          name: a.name,
          state: a.state,
          template: a.templateName,
          initiator: a.initiator,
          nodes: a.allocation?.nodes ?? a.request.nodeCount,
          start: a.allocation?.start,
          end: a.allocation?.end,
          createdAt: a.createdAt,
        })),
      );
    } catch (error) {
      options.logger.error({ err: error }, 'listing agreements failed');
      res.status(500).json({ error: 'listing agreements failed; see the server log' });
    }
  });
  app.use(soapRouter(options));
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('not found: SOAP ports live under /wsag/, e.g. /wsag/AgreementFactory?wsdl\n');
  });
  return app;
}
