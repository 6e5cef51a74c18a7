// Values shaped by a route's own JSON schema, for fuzzing every route of the table without
// writing a generator per route: every optional field present, every array non-empty, one
// branch of each union, strings that match their pattern or format where fast-check can make one.
// Also lists the string slots of a value (and its objects, where a field name can be bad).

import fc from 'fast-check';

type Schema = Record<string, unknown>;

const MAX_STRING = 24;

export function valueOf(schema: unknown): fc.Arbitrary<unknown> {
  const s = (schema ?? {}) as Schema;
  if ('const' in s) return fc.constant(s['const']);
  if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
  const branches = (s['anyOf'] ?? s['oneOf']) as unknown[] | undefined;
  if (Array.isArray(branches)) return fc.oneof(...branches.map(valueOf));
  const type = s['type'];
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => valueOf({ ...s, type: t })));
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = typeof s['minimum'] === 'number' ? s['minimum'] : 0;
      const max = typeof s['maximum'] === 'number' ? s['maximum'] : min + 1000;
      return fc.integer({ min: Math.ceil(min), max: Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)) });
    }
    case 'string':
      return stringOf(s);
    case 'array': {
      const minLength = Math.max(1, Number(s['minItems'] ?? 0));
      const maxLength = Math.max(minLength, Math.min(Number(s['maxItems'] ?? 3), minLength + 2));
      return fc.array(valueOf(s['items']), { minLength, maxLength });
    }
    case 'object': {
      const properties = (s['properties'] ?? {}) as Record<string, unknown>;
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, child] of Object.entries(properties)) record[name] = valueOf(child);
      return fc.record(record);
    }
    default:
      return fc.constant('x');
  }
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  const minLength = Number(s['minLength'] ?? 0);
  const maxLength = Math.max(
    minLength,
    Math.min(Number(s['maxLength'] ?? MAX_STRING), minLength + MAX_STRING),
  );
  if (typeof s['pattern'] === 'string') {
    try {
      const pattern = new RegExp(s['pattern']);
      // Only the schema's own bounds filter a pattern's strings (an address is longer than
      // MAX_STRING): a bound the pattern cannot meet would make the filter spin for ever.
      const most = typeof s['maxLength'] === 'number' ? s['maxLength'] : Infinity;
      return fc
        .stringMatching(pattern)
        .filter((v) => v.length >= minLength && v.length <= most && /^[\x20-\x7e]*$/.test(v));
    } catch {
      // a pattern fast-check cannot invert: plain text below
    }
  }
  switch (s['format']) {
    case 'date-time':
      return fc
        .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl();
    default:
      return fc.string({ minLength, maxLength });
  }
}

/** Where a string, or an object (whose field names are strings too), sits inside a value. */
export interface Slot {
  /** `body.agents[0].name`: the name the refusal must give. */
  name: string;
  path: (string | number)[];
  kind: 'string' | 'object';
}

export function slotsOf(value: unknown, name: string, path: (string | number)[] = []): Slot[] {
  if (typeof value === 'string') return [{ name, path, kind: 'string' }];
  if (Array.isArray(value)) return value.flatMap((v, i) => slotsOf(v, `${name}[${i}]`, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return [
      { name, path, kind: 'object' },
      ...Object.entries(value).flatMap(([k, v]) => slotsOf(v, `${name}.${k}`, [...path, k])),
    ];
  }
  return [];
}

/** A copy of `value` with the string at `path` replaced, or a field `key` added to the object there. */
export function withAt(value: unknown, slot: Slot, text: string): unknown {
  const copy = structuredClone(value);
  if (slot.path.length === 0) {
    return slot.kind === 'string' ? text : { ...(copy as object), [text]: 1 };
  }
  let parent = copy as Record<string | number, unknown>;
  for (const step of slot.path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = slot.path[slot.path.length - 1] as string | number;
  if (slot.kind === 'string') parent[last] = text;
  else parent[last] = { ...(parent[last] as object), [text]: 1 };
  return copy;
}
