/**
 * How one /api route is described in the OpenAPI document (openapi/document.ts): written once
 * beside the others, turned into an OpenAPI operation here. Paths are written as Express
 * writes them (`/api/agreements/:id`), so the routes the server answers can be compared with
 * them as they are.
 */
export type Json = { [key: string]: unknown };

/** Who may call a route (docs/security.md): the authorisation matrix's rules. */
export type Rule = 'public' | 'party' | 'owner' | 'initiator' | 'operator';

export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  rule: Rule;
  tag: string;
  query?: Array<{ name: string; description: string; schema: Json }>;
  /** The request body: a schema (JSON unless `contentType` says otherwise) and an example. */
  body?: { schema: Json; example: unknown; contentType?: string };
  /** Takes an Idempotency-Key header. */
  idempotent?: boolean;
  ok: { status: number; description: string; schema?: Json; example?: unknown; contentType?: string };
}

/** `/api/agreements/:id` as OpenAPI writes it: `/api/agreements/{id}`. */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

const pathParameter = (name: string): Json => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: name === 'id' ? 'the resource id' : `the ${name} id`,
});

export function operationOf(route: RouteDoc): Json {
  const contentType = route.ok.contentType ?? 'application/json';
  const parameters = [
    ...[...route.path.matchAll(/:(\w+)/g)].map((m) => pathParameter(m[1] as string)),
    ...(route.query ?? []).map((q) => ({ ...q, in: 'query', required: false })),
    ...(route.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    'x-wsag-authorisation': route.rule,
    ...(route.rule === 'public' ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              [route.body.contentType ?? 'application/json']: {
                schema: route.body.schema,
                examples: { example: { value: route.body.example } },
              },
            },
          },
        }
      : {}),
    responses: {
      [String(route.ok.status)]: {
        description: route.ok.description,
        ...(route.ok.status === 204
          ? {}
          : {
              content: {
                [contentType]: {
                  schema: route.ok.schema ?? { type: 'object' },
                  ...(route.ok.example !== undefined ? { examples: { example: { value: route.ok.example } } } : {}),
                },
              },
            }),
      },
      default: { $ref: '#/components/responses/Problem' },
    },
  };
}
