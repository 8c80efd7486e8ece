import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { SchemaViolation } from '../../domain/errors.js';
import { schemas } from './schemas.js';
import { apiRoutes } from './document.js';

/**
 * Request bodies checked against the OpenAPI document's own schemas by Ajv (JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1): the document is the one description of what a
 * route takes, and a body it refuses is a SchemaViolation in plain words, Ajv's in the detail.
 */
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'wsag-api', $defs: schemas });
const compiled = new Map<string, ValidateFunction>();

/** The JSON body of `operationId`, checked; what it is not, said by field. */
export function validBody<T>(operationId: string, body: unknown): T {
  let validate = compiled.get(operationId);
  if (!validate) {
    const route = apiRoutes.find((r) => r.operationId === operationId);
    if (!route?.body) throw new Error(`no JSON body is described for ${operationId}`);
    validate = ajv.compile(localRefs(route.body.schema) as object);
    compiled.set(operationId, validate);
  }
  if (validate(body)) return body as T;
  const errors = validate.errors ?? [];
  throw new SchemaViolation(
    `the body is not what ${operationId} takes: ${plainWords(errors)}`,
    ajv.errorsText(errors, { dataVar: 'body' }),
  );
}

/** `#/components/schemas/X` (the document's references) as references into the schemas registered here. */
function localRefs(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"wsag-api#/$defs/'));
}

function plainWords(errors: readonly ErrorObject[]): string {
  const at = (e: ErrorObject) => (e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'the body');
  const said = errors.map((e) =>
    e.keyword === 'additionalProperties'
      ? `${at(e)} has a field "${(e.params as { additionalProperty: string }).additionalProperty}" it does not take`
      : e.keyword === 'required'
        ? `${at(e)} needs "${(e.params as { missingProperty: string }).missingProperty}"`
        : `${at(e)} ${e.message}`,
  );
  return [...new Set(said)].join('; ');
}
