// Policy documents in the browser: checked against the schema the service publishes (its OpenAPI
// document's request body of PUT /v1/policies) before anything is sent, and compared path by path.
// The checker knows the JSON Schema keywords that schema uses; the service checks again on receipt.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: Json[];
  const?: Json;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  description?: string;
}

export interface SchemaProblem {
  path: string;
  message: string;
}

function typeOf(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(want: string, value: Json): boolean {
  const have = typeOf(value);
  return want === have || (want === 'number' && have === 'integer');
}

const same = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b);

/** Every way `value` breaks `schema`, each with the path of the offending field. */
export function checkSchema(schema: JsonSchema, value: Json, path = ''): SchemaProblem[] {
  const at = path || '(document)';
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const fits = alternatives.some((s) => checkSchema(s, value, path).length === 0);
    if (!fits) return [{ path: at, message: 'matches none of the allowed forms' }];
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value)))
      return [{ path: at, message: `must be ${types.join(' or ')}, not ${typeOf(value)}` }];
  }
  const problems: SchemaProblem[] = [];
  const add = (message: string) => problems.push({ path: at, message });
  if (schema.const !== undefined && !same(schema.const, value))
    add(`must be ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.some((e) => same(e, value)))
    add(`must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof value === 'string') {
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      add(`has the wrong form (${schema.description ?? `pattern ${schema.pattern}`})`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      add(`is longer than ${schema.maxLength} characters`);
    if (schema.minLength !== undefined && value.length < schema.minLength)
      add(`is shorter than ${schema.minLength} characters`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) add(`must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) add(`must be at most ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      add(`has more than ${schema.maxItems} entries`);
    if (schema.minItems !== undefined && value.length < schema.minItems)
      add(`has fewer than ${schema.minItems} entries`);
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
      add('repeats an entry');
    if (schema.items)
      value.forEach((v, i) => problems.push(...checkSchema(schema.items!, v, `${path}[${i}]`)));
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, Json>;
    for (const key of schema.required ?? [])
      if (!(key in object)) problems.push({ path: join(path, key), message: 'is required' });
    for (const [key, v] of Object.entries(object)) {
      const child = schema.properties?.[key];
      if (child) problems.push(...checkSchema(child, v, join(path, key)));
      else if (schema.additionalProperties === false)
        problems.push({ path: join(path, key), message: 'is not a field of this section' });
      else if (typeof schema.additionalProperties === 'object')
        problems.push(...checkSchema(schema.additionalProperties, v, join(path, key)));
    }
  }
  return problems;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** The document's leaves by path (`spend.daily_usd`); arrays are compared whole. */
export function flatten(value: Json, path = '', into = new Map<string, Json>()): Map<string, Json> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 && path) into.set(path, value);
    for (const [key, v] of entries) flatten(v, join(path, key), into);
  } else if (path) into.set(path, value);
  return into;
}

export interface Change {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before: Json | undefined;
  after: Json | undefined;
}

/** What changed from `before` to `after`, field by field, in path order. */
export function diffDocuments(before: Json, after: Json): Change[] {
  const a = flatten(before);
  const b = flatten(after);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const changes: Change[] = [];
  for (const path of paths) {
    const x = a.get(path);
    const y = b.get(path);
    if (!a.has(path)) changes.push({ path, kind: 'added', before: undefined, after: y });
    else if (!b.has(path)) changes.push({ path, kind: 'removed', before: x, after: undefined });
    else if (!same(x!, y!)) changes.push({ path, kind: 'changed', before: x, after: y });
  }
  return changes;
}
