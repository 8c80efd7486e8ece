import type { Express } from 'express';
import type { Port } from '../soap/operation.js';

/**
 * One thing a caller can ask of the server: an HTTP method and path, or a SOAP operation (`SOAP`, `<port path>
 * <operation>`).
 */
export interface Route {
  method: string;
  path: string;
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/**
 * The routes an Express application answers, read from its router (routers mounted at the
 * root included), and the operations of its SOAP ports: what the authorisation matrix
 * (test/security/authorisation-matrix.test.ts) must give a rule to.
 */
export function routesOf(app: Express, ports: readonly Port[]): Route[] {
  const routes: Route[] = [];
  const walk = (stack: readonly RouterLayer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== '_all') routes.push({ method: method.toUpperCase(), path: layer.route.path });
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as unknown as { router: { stack: RouterLayer[] } }).router.stack);
  for (const port of ports)
    for (const operation of port.operations) routes.push({ method: 'SOAP', path: `${port.path} ${operation.name}` });
  return routes;
}
