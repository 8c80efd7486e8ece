import fs from 'node:fs';
import { agreementRoutes } from './agreement-routes.js';
import { type Json, openApiPath, operationOf, type RouteDoc } from './route-doc.js';
import { schemas } from './schemas.js';
import { siteRoutes } from './site-routes.js';

/** Every /api route, described once: the OpenAPI document, request validation and docs/api.md's check read it. */
export const apiRoutes: readonly RouteDoc[] = [...agreementRoutes, ...siteRoutes];

/** The package's version (the document's info.version): package.json sits three folders up, from src/ or dist/. */
const version = (): string =>
  (JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;

/** The OpenAPI 3.1 document of the JSON face, served at /api/openapi.json. */
export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const route of apiRoutes) (paths[openApiPath(route.path)] ??= {})[route.method] = operationOf(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'wsag-server JSON API',
      version: version(),
      description:
        'The agreement lifecycle and the site over JSON, beside the WS-Agreement SOAP ports: the same engine, the ' +
        'same rules. Callers authenticate with a TLS client certificate (WS-Security is SOAP only); refusals are ' +
        'RFC 9457 problem documents with the fault names of SOAP (docs/api.md, docs/faults.md).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    security: [{ clientCertificate: [] }],
    tags: ['templates', 'agreements', 'negotiations', 'accounts', 'usage', 'site'].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        clientCertificate: {
          type: 'mutualTLS',
          description: 'a certificate (or proxy) the site trusts (WSAG_CA_FILE)',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'the same key and body within 24 hours answer what the first request was answered; the same key ' +
            'with another body is refused',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      responses: {
        Problem: {
          description: 'a refusal: the fault, and what was wrong in plain words',
          content: {
            'application/problem+json': {
              schema: { $ref: '#/components/schemas/Problem' },
              examples: {
                example: {
                  value: {
                    type: 'https://schemas.wsag-server.org/2026/11/faults#UnknownTemplate',
                    title: 'UnknownTemplate',
                    status: 400,
                    detail: 'no template "Bach job"; did you mean "Batch job"?',
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}
