import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule.default;

/** An Ajv that lists every error, knows the standard formats and ignores unknown keywords. */
export function createAjv(options: { coerceTypes?: boolean; useDefaults?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: true, // list every bad field, not just the first
    removeAdditional: false, // unknown fields are rejected by name, never silently dropped
    useDefaults: options.useDefaults ?? false,
    coerceTypes: options.coerceTypes ?? false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

function makeAjv(coerce: boolean): Ajv {
  return createAjv({ coerceTypes: coerce, useDefaults: true });
}

// Bodies are JSON and must carry the right types; query strings and path parameters are text
// and are coerced to the schema's integers.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

/**
 * A route's validator, compiled on its first request rather than when the app is built: compiling
 * every route's schemas at start took a good part of a warm restart. Fastify reads `errors` from
 * the function after each call, so the wrapper carries the compiled validator's across.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  let compiled: ValidateFunction | null = null;
  const validate = ((data: unknown) => {
    compiled ??= ajv.compile(schema as object);
    const valid = compiled(data);
    validate.errors = compiled.errors ?? null;
    return valid;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
};

/** Turns ajv errors into one sentence naming every bad field. */
export function describeValidationErrors(errors: ErrorObject[], part: string): string {
  const problems = new Set<string>();
  for (const e of errors) {
    const at = fieldName(part, e.instancePath);
    switch (e.keyword) {
      case 'additionalProperties':
        problems.add(`unknown field ${joinField(at, String(e.params['additionalProperty']))}`);
        break;
      case 'required':
        problems.add(`${joinField(at, String(e.params['missingProperty']))} is required`);
        break;
      case 'type':
        problems.add(`${at} must be ${articled(String(e.params['type']))}`);
        break;
      case 'enum':
        problems.add(
          `${at} must be one of ${(e.params['allowedValues'] as unknown[]).map(String).join(', ')}`,
        );
        break;
      case 'const':
        problems.add(`${at} must be ${JSON.stringify(e.params['allowedValue'])}`);
        break;
      case 'pattern':
        problems.add(`${at} has an invalid format`);
        break;
      case 'anyOf':
      case 'oneOf':
        // the branch errors above already explain it
        if (errors.length === 1) problems.add(`${at} is invalid`);
        break;
      default:
        problems.add(`${at} ${e.message ?? 'is invalid'}`);
    }
  }
  return `Invalid ${part}: ${[...problems].join('; ')}.`;
}

function fieldName(part: string, instancePath: string): string {
  if (!instancePath) return part;
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

function joinField(parent: string, child: string): string {
  return parent === 'body' || parent === 'querystring' || parent === 'params' ? child : `${parent}.${child}`;
}

function articled(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * Fastify's own response serializers (fast-json-stringify, which also leaves out any field the
 * response schema does not name), each compiled on its route's first answer with that status
 * rather than when the app is built, as the validators are.
 */
export function lazySerializerCompiler(): FastifySerializerCompiler<unknown> {
  const compile = SerializerSelector()();
  return (route) => {
    let serialize: ((data: unknown) => string) | null = null;
    return (data: unknown) => (serialize ??= compile(route as Parameters<typeof compile>[0]))(data);
  };
}
