// Every route of the table arrives complete in the OpenAPI document: each answer described in
// words, every error it can give listed with its status and codes, Idempotency-Key on every
// mutation, and an example request and response that the route's own schemas accept. The
// resources of the spec are named components that the operations reference.

import { describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES } from '../src/core/errors/codes.ts';
import { buildOpenApiDocument, operationErrors, responseSchemaOf } from '../src/core/http/openapi.ts';
import { isIdempotent, type RouteDefinition } from '../src/core/http/route-table.ts';
import { createAjv } from '../src/core/http/validation.ts';
import { everyRoute } from './support/routes.ts';

interface Operation {
  parameters?: ({ $ref: string } | { name: string; in: string; example?: unknown })[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<
    string,
    {
      description: string;
      headers?: Record<string, unknown>;
      content?: Record<string, { example?: unknown; examples?: Record<string, unknown> }>;
    }
  >;
}
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

// Routes without docs fail the first test by name; the others check the rest of the table.
const documented = everyRoute.filter((route) => route.docs !== undefined);
const doc = buildOpenApiDocument(documented, {
  title: 'Purser treasury API',
  version: '0.1.0',
  description: 'test',
  publicUrl: 'http://127.0.0.1:8080',
}) as unknown as Doc;

const opOf = (route: RouteDefinition): Operation => {
  const op = doc.paths[route.url]?.[route.method.toLowerCase()];
  if (!op) throw new Error(`${route.operationId} is missing from the document`);
  return op;
};
const name = (route: RouteDefinition) => `${route.method} ${route.url} (${route.operationId})`;

function validator(coerce: boolean) {
  const ajv = createAjv({ coerceTypes: coerce });
  return (schema: unknown, value: unknown): string | null => {
    const validate = ajv.compile(schema as object);
    return validate(structuredClone(value)) ? null : ajv.errorsText(validate.errors);
  };
}
const checkBody = validator(false);
const checkText = validator(true);

describe('the OpenAPI document is complete for every route of the table', () => {
  it('has docs for every route', () => {
    const name = (route: RouteDefinition) => `${route.method} ${route.url} (${route.operationId})`;
    expect(everyRoute.filter((route) => route.docs === undefined).map(name)).toEqual([]);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
  });

  it('describes every success answer in words', () => {
    const missing = documented.flatMap((route) =>
      Object.keys(route.schema.response)
        .filter((status) => !(opOf(route).responses[status]?.description ?? '').trim())
        .map((status) => `${name(route)} ${status}`),
    );
    expect(missing).toEqual([]);
  });

  it('lists every error an operation can answer, with its status, its codes and an example of each', () => {
    const problems: string[] = [];
    for (const route of documented) {
      const op = opOf(route);
      const errors = operationErrors(route);
      if (errors.length === 0) problems.push(`${name(route)}: no error responses`);
      for (const e of errors) {
        if (e.status < 400) problems.push(`${name(route)}: ${e.code} documented with status ${e.status}`);
        const response = op.responses[String(e.status)];
        if (!response) {
          problems.push(`${name(route)}: no ${e.status} response for ${e.code}`);
          continue;
        }
        if (route.schema.response[e.status]) continue; // the route's own body for this status
        if (!response.description.includes(e.code))
          problems.push(`${name(route)} ${e.status}: ${e.code} not named`);
        const examples = Object.values(response.content?.['application/json']?.examples ?? {}) as {
          value: { code: string };
        }[];
        if (!examples.some((x) => x.value.code === e.code))
          problems.push(`${name(route)} ${e.status}: no example of ${e.code}`);
      }
      // Each status a code is raised with is a status the error table allows for that code or one declared.
      for (const d of route.docs.errors) {
        const code = typeof d === 'string' ? d : d.code;
        if (!(code in ERROR_CODES)) problems.push(`${name(route)}: unknown code ${code}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('declares Idempotency-Key on every mutation and the idempotent-replayed header on its answers', () => {
    const problems: string[] = [];
    for (const route of documented) {
      const op = opOf(route);
      const mutation = isIdempotent(route);
      const hasKey = (op.parameters ?? []).some(
        (p) => '$ref' in p && p.$ref === '#/components/parameters/IdempotencyKey',
      );
      if (mutation !== hasKey)
        problems.push(`${name(route)}: Idempotency-Key ${hasKey ? 'on a read' : 'missing'}`);
      for (const status of Object.keys(route.schema.response)) {
        const replayed = 'idempotent-replayed' in (op.responses[status]?.headers ?? {});
        if (mutation !== replayed) problems.push(`${name(route)} ${status}: idempotent-replayed header`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("carries an example request and response for every operation, which the route's schemas accept", () => {
    const problems: string[] = [];
    for (const route of documented) {
      const { example } = route.docs;
      const op = opOf(route);
      const schema = route.schema.response[example.status];
      if (!schema) {
        problems.push(`${name(route)}: example status ${example.status} is not one of its answers`);
        continue;
      }
      const responseError = checkBody(responseSchemaOf(schema), example.response);
      if (responseError) problems.push(`${name(route)} response: ${responseError}`);
      const content = Object.values(op.responses[String(example.status)]?.content ?? {})[0];
      if (content?.example === undefined)
        problems.push(`${name(route)}: no response example in the document`);

      const parts = [
        ['body', route.schema.body, example.body, checkBody],
        ['params', route.schema.params, example.params, checkText],
        ['query', route.schema.querystring, example.query, checkText],
      ] as const;
      for (const [part, partSchema, value, check] of parts) {
        if (!partSchema) {
          if (value !== undefined) problems.push(`${name(route)}: example ${part} but the route takes none`);
          continue;
        }
        if (value === undefined) {
          if (part !== 'query') problems.push(`${name(route)}: no example ${part}`);
          continue;
        }
        const error = check(partSchema, value);
        if (error) problems.push(`${name(route)} ${part}: ${error}`);
      }
      if (route.schema.body && op.requestBody?.content['application/json']?.example === undefined)
        problems.push(`${name(route)}: no request example in the document`);
    }
    expect(problems).toEqual([]);
  });

  it('names the error body and the resources of the spec as components, referenced by the operations', () => {
    const names = Object.keys(doc.components.schemas);
    for (const resource of [
      'ErrorBody',
      'FeatureRequest',
      'PendingSettlement',
      'ApiKey',
      'Delegation',
      'DelegationRevocation',
      'Intent',
      'PolicyRecord',
      'PrepaidBalance',
      'Statement',
      'QuoteComparison',
      'TokenRegistryEntry',
      'ScreeningResult',
      'AccountExport',
    ])
      expect(names).toContain(resource);
    const text = JSON.stringify(doc.paths);
    const unreferenced = names.filter(
      (n) => n !== 'ErrorBody' && !text.includes(`#/components/schemas/${n}"`),
    );
    // A component may be referenced only from another component.
    const components = JSON.stringify(doc.components.schemas);
    expect(unreferenced.filter((n) => !components.includes(`#/components/schemas/${n}"`))).toEqual([]);
    expect(text).toContain('#/components/schemas/ErrorBody"');
  });
});
