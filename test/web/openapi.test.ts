import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { apiRoutes, openApiDocument } from '../../src/web/openapi/document.js';
import { openApiPath } from '../../src/web/openapi/route-doc.js';
import { startTestServer } from '../support/server.js';

/** The OpenAPI document: valid by a validator nobody here wrote, and a description of every /api route. */
describe('the OpenAPI document', () => {
  it('validates against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator)', async () => {
    const result = await new Validator().validate(openApiDocument() as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every /api route the server answers, and only those', async () => {
    const server = await startTestServer();
    try {
      const served = server
        .routes()
        .filter((r) => r.path.startsWith('/api'))
        .map((r) => `${r.method} ${openApiPath(r.path)}`);
      const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
      const described = Object.entries(paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      );
      expect(
        served.filter((r) => !described.includes(r)),
        'routes the document does not describe',
      ).toEqual([]);
      expect(
        described.filter((d) => !served.includes(d)),
        'operations no route serves',
      ).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('gives each route an example, of its body where it takes one, and a distinct operationId', () => {
    const ids = apiRoutes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const without = apiRoutes.filter((r) => (r.body ? r.body.example === undefined : false));
    expect(without.map((r) => r.operationId)).toEqual([]);
    const json = apiRoutes.filter(
      (r) => (r.ok.contentType ?? 'application/json') === 'application/json' && r.ok.status !== 204,
    );
    expect(json.filter((r) => r.ok.example === undefined).map((r) => r.operationId)).toEqual([]);
  });
});
