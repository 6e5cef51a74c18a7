// The OpenAPI 3.1 document, built from the route table: each route's schemas, its `docs` (errors,
// response descriptions, example) and the errors every route of its kind can answer. A schema
// carrying a `title` becomes a named component, referenced wherever it appears.

import { ERROR_CODES, type ErrorCode } from '../errors/codes.ts';
import { docsUrlFor } from './error-renderer.ts';
import { isIdempotent, isRateLimited, type RouteDefinition } from './route-table.ts';

export interface OpenApiOptions {
  title: string;
  version: string;
  description: string;
  publicUrl: string;
}

type Json = Record<string, unknown>;

/** One error an operation can answer. */
export interface OperationError {
  code: ErrorCode;
  status: number;
  when?: string;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A unique key per logical request (1 to 255 printable ASCII characters; a UUID is ideal). A retry with ' +
    'the same key and payload replays the first answer instead of repeating the work; kept 7 days.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

const HEADERS = {
  RequestId: {
    description: 'The id of this request; quote it in support requests (it is also `request_id` in errors).',
    schema: { type: 'string' },
  },
  IdempotentReplayed: {
    description:
      'Present, as `true`, when this answer is the stored answer replayed for a reused Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

const ERROR_BODY = {
  type: 'object',
  description: 'Every error answer has this body.',
  required: ['code', 'message', 'remediation', 'docs_url', 'request_id'],
  properties: {
    code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'See /docs/errors.' },
    message: { type: 'string', description: 'What went wrong, safe to show; names every bad field.' },
    remediation: { type: 'string', description: 'What to do about it.' },
    docs_url: { type: 'string', format: 'uri', description: "The code's anchor in the error table." },
    request_id: { type: 'string' },
    next: {
      type: 'array',
      description: 'Calls that move the caller forward.',
      items: {
        type: 'object',
        required: ['method', 'path', 'why'],
        properties: {
          method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE'] },
          path: { type: 'string' },
          why: { type: 'string' },
        },
      },
    },
  },
};

/** The errors any route of this kind answers, whatever its handler does. */
export function impliedErrors(route: RouteDefinition): OperationError[] {
  const errors: OperationError[] = [];
  const idempotent = isIdempotent(route);
  const { body, querystring, params } = route.schema;
  if (body || querystring || params || idempotent)
    errors.push({ code: 'INVALID_REQUEST', status: 400, when: 'a field or parameter failed validation' });
  if (body) {
    errors.push({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    errors.push({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
  }
  if (route.class === 'bearer' || route.class === 'executor') {
    errors.push({ code: 'UNAUTHORIZED', status: 401 });
    errors.push({
      code: 'FORBIDDEN',
      status: 403,
      when:
        route.class === 'executor'
          ? 'the caller is not signed in as the treasury executor'
          : "the credential's scope, wallet pin or IP pin does not admit this call",
    });
  }
  if (route.class === 'operator') {
    errors.push({ code: 'UNAUTHORIZED', status: 401, when: 'the operator token is missing or wrong' });
    errors.push({ code: 'NOT_FOUND', status: 404, when: 'no operator token is configured' });
  }
  if (isRateLimited(route)) errors.push({ code: 'RATE_LIMITED', status: 429 });
  if (idempotent) {
    errors.push({
      code: 'IDEMPOTENCY_CONFLICT',
      status: 422,
      when: 'the Idempotency-Key was used with a different payload',
    });
    errors.push({
      code: 'IDEMPOTENCY_CONFLICT',
      status: 409,
      when: 'a request with this Idempotency-Key is still in flight',
    });
  }
  errors.push({ code: 'INTERNAL', status: 500 });
  errors.push({ code: 'UNAVAILABLE', status: 503, when: 'the server is shutting down; retry' });
  errors.push({ code: 'DEADLINE_EXCEEDED', status: 504 });
  return errors;
}

/** Every error an operation can answer: those of its kind and those its docs name. */
export function operationErrors(route: RouteDefinition): OperationError[] {
  const byKey = new Map<string, OperationError>();
  const declared = route.docs.errors.map((e) =>
    typeof e === 'string'
      ? { code: e, status: ERROR_CODES[e].status }
      : { code: e.code, status: e.status ?? ERROR_CODES[e.code].status, ...(e.when ? { when: e.when } : {}) },
  );
  for (const e of [...impliedErrors(route), ...declared]) {
    const key = `${e.status} ${e.code}`;
    const seen = byKey.get(key);
    const when = [seen?.when, e.when].filter((w): w is string => !!w);
    byKey.set(key, {
      code: e.code,
      status: e.status,
      ...(when.length ? { when: [...new Set(when)].join('; ') } : {}),
    });
  }
  return [...byKey.values()].sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
}

/** Lifts every titled schema into `components`, leaving a reference in its place. */
class Components {
  readonly schemas: Record<string, unknown> = { ErrorBody: ERROR_BODY };
  private readonly shapes = new Map<string, string>([['ErrorBody', JSON.stringify(ERROR_BODY)]]);

  lift(schema: unknown): unknown {
    const plain = JSON.parse(JSON.stringify(schema ?? {})) as unknown;
    return this.walk(plain);
  }

  private walk(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.walk(n));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    const title = obj['title'];
    if (typeof title === 'string') {
      const shape = JSON.stringify(obj);
      const known = this.shapes.get(title);
      if (known === undefined) {
        this.shapes.set(title, shape);
        this.schemas[title] = this.walkChildren(obj);
      } else if (known !== shape) {
        throw new Error(`Two different schemas carry the title ${title}: a component title names one schema`);
      }
      return { $ref: `#/components/schemas/${title}` };
    }
    return this.walkChildren(obj);
  }

  private walkChildren(obj: Json): Json {
    const out: Json = {};
    for (const [k, v] of Object.entries(obj)) {
      // `properties` and `patternProperties` map names to schemas; `examples`/`default`/`const` are values.
      if (k === 'examples' || k === 'default' || k === 'const' || k === 'enum') out[k] = v;
      else if (
        (k === 'properties' || k === 'patternProperties' || k === '$defs') &&
        v &&
        typeof v === 'object'
      )
        out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, s]) => [name, this.walk(s)]));
      else out[k] = this.walk(v);
    }
    return out;
  }
}

function parametersOf(route: RouteDefinition, components: Components): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query', schema: unknown, example: Record<string, unknown> | undefined) => {
    const obj = JSON.parse(JSON.stringify(schema ?? {})) as Json;
    const props = (obj['properties'] ?? {}) as Record<string, Json>;
    const required = new Set((obj['required'] as string[] | undefined) ?? []);
    for (const [name, s] of Object.entries(props)) {
      const { description, ...rest } = s;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(typeof description === 'string' ? { description } : {}),
        schema: components.lift(rest),
        ...(example && name in example ? { example: example[name] } : {}),
      });
    }
  };
  if (route.schema.params) add('path', route.schema.params, route.docs.example.params);
  // A path parameter the route leaves unvalidated is still a required string.
  for (const [, name] of route.url.matchAll(/\{(\w+)\}/g)) {
    if (name && !out.some((p) => p['in'] === 'path' && p['name'] === name))
      out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.schema.querystring) add('query', route.schema.querystring, route.docs.example.query);
  if (isIdempotent(route)) out.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return out;
}

function contentTypeOf(schema: unknown): string {
  return (schema as Json | undefined)?.['type'] === 'string' ? 'text/plain' : 'application/json';
}

/**
 * A route's response entry is a schema, or a whole response object (`{description, headers,
 * content}`) for an answer with several media types.
 */
interface ResponseObject {
  description?: string;
  headers?: Record<string, unknown>;
  content: Record<string, { schema: unknown }>;
}

function isResponseObject(entry: unknown): entry is ResponseObject {
  const content = (entry as Json | undefined)?.['content'];
  return !!content && typeof content === 'object' && (entry as Json)['type'] === undefined;
}

/** The JSON schema of a response entry's main (first) media type, to validate an example with. */
export function responseSchemaOf(entry: unknown): unknown {
  return isResponseObject(entry) ? Object.values(entry.content)[0]?.schema : entry;
}

function successResponses(route: RouteDefinition, components: Components): Record<string, Json> {
  const out: Record<string, Json> = {};
  const idempotent = isIdempotent(route);
  const { example } = route.docs;
  for (const [status, entry] of Object.entries(route.schema.response)) {
    const object = isResponseObject(entry) ? entry : null;
    const media: [string, unknown][] = object
      ? Object.entries(object.content).map(([type, c]) => [type, c.schema])
      : [[route.docs.contentType ?? contentTypeOf(entry), entry]];
    const extraHeaders = Object.fromEntries(
      Object.entries(object?.headers ?? {}).map(([name, schema]) => {
        const { description, ...rest } = JSON.parse(JSON.stringify(schema)) as Json;
        return [name, { ...(description ? { description } : {}), schema: components.lift(rest) }];
      }),
    );
    out[status] = {
      description: route.docs.responses[Number(status)] ?? object?.description ?? '',
      headers: {
        'x-request-id': { $ref: '#/components/headers/RequestId' },
        ...(idempotent ? { 'idempotent-replayed': { $ref: '#/components/headers/IdempotentReplayed' } } : {}),
        ...extraHeaders,
      },
      content: Object.fromEntries(
        media.map(([type, schema], i) => [
          type,
          {
            schema: components.lift(schema),
            ...(i === 0 && example.status === Number(status) ? { example: example.response } : {}),
          },
        ]),
      ),
    };
  }
  return out;
}

function errorResponses(
  route: RouteDefinition,
  declared: Set<string>,
  publicUrl: string,
): Record<string, Json> {
  const byStatus = new Map<number, OperationError[]>();
  for (const e of operationErrors(route)) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e]);
  const out: Record<string, Json> = {};
  for (const [status, errors] of byStatus) {
    if (declared.has(String(status))) continue; // the route's own schema answers this status
    const codes = [...new Set(errors.map((e) => e.code))];
    out[String(status)] = {
      description: errors
        .map((e) => `${e.code}: ${e.when ? `${e.when}.` : ERROR_CODES[e.code].description}`)
        .join(' '),
      headers: {
        'x-request-id': { $ref: '#/components/headers/RequestId' },
        ...(status === 429 || status === 503
          ? { 'retry-after': { $ref: '#/components/headers/RetryAfter' } }
          : {}),
      },
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorBody' },
              { type: 'object', properties: { code: { type: 'string', enum: codes } } },
            ],
          },
          examples: Object.fromEntries(
            errors.map((e) => [
              `${e.code}${codes.length < errors.length ? `_${errors.indexOf(e)}` : ''}`,
              {
                summary: e.when ?? ERROR_CODES[e.code].title,
                value: {
                  code: e.code,
                  message: e.when ? capitalise(`${e.when}.`) : ERROR_CODES[e.code].description,
                  remediation: ERROR_CODES[e.code].remediation,
                  docs_url: docsUrlFor(publicUrl, e.code),
                  request_id: 'req_01JD7ZV6E8Q3N2K4M5P6R7S8T9',
                },
              },
            ]),
          ),
        },
      },
    };
  }
  return out;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The OpenAPI 3.1 document of these routes. */
export function buildOpenApiDocument(routes: RouteDefinition[], options: OpenApiOptions): Json {
  const components = new Components();
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const { body } = route.schema;
    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      'x-route-class': route.class,
      ...(route.class === 'bearer' && route.scope ? { 'x-scope': route.scope } : {}),
      ...(route.class === 'public'
        ? {}
        : { security: [route.class === 'operator' ? { operatorToken: [] } : { bearer: [] }] }),
    };
    const parameters = parametersOf(route, components);
    if (parameters.length) operation['parameters'] = parameters;
    if (body) {
      operation['requestBody'] = {
        required: true,
        content: {
          'application/json': {
            schema: components.lift(body),
            ...(route.docs.example.body !== undefined ? { example: route.docs.example.body } : {}),
          },
        },
      };
    }
    const success = successResponses(route, components);
    operation['responses'] = {
      ...success,
      ...errorResponses(route, new Set(Object.keys(success)), options.publicUrl),
    };
    (paths[route.url] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.publicUrl }],
    paths,
    components: {
      schemas: components.schemas,
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
      headers: HEADERS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A session token or an API key' },
        operatorToken: {
          type: 'http',
          scheme: 'bearer',
          description: "The deployment's operator token (PURSER_OPERATOR_TOKEN); opens /v1/ops/ only",
        },
      },
    },
  };
}
