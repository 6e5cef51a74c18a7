// Words whose list the application gives when it builds: a route's schema marks a string with
// `vocabularyString(name)`, and `applyVocabularies` turns each mark into an `enum` of the words
// given, so the validator and the OpenAPI document both hold the list the configuration implies
// (the conversion venues: the real ones, plus the devnet's AMM where the devnet's door adds it).

import { Type, type TUnsafe } from 'typebox';
import type { RouteDefinition } from './route-table.ts';

const MARK = 'x-vocabulary';

/** Vocabulary name → its words, in the order the document lists them. */
export type Vocabularies = Readonly<Record<string, readonly string[]>>;

/** A string that must be one of the words of the vocabulary `name`. */
export function vocabularyString(name: string, options: { description?: string } = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ type: 'string', [MARK]: name, ...options });
}

/** The routes with every vocabulary mark in their schemas replaced by the vocabulary's words. */
export function applyVocabularies(
  routes: readonly RouteDefinition[],
  vocabularies: Vocabularies,
): RouteDefinition[] {
  return routes.map((route) =>
    JSON.stringify(route.schema).includes(MARK)
      ? { ...route, schema: substitute(route.schema, vocabularies) as RouteDefinition['schema'] }
      : route,
  );
}

function substitute(node: unknown, vocabularies: Vocabularies): unknown {
  if (Array.isArray(node)) return node.map((item) => substitute(item, vocabularies));
  if (node === null || typeof node !== 'object') return node;
  const object = node as Record<string | symbol, unknown>;
  const name = object[MARK];
  if (typeof name === 'string') {
    const words = vocabularies[name];
    if (!words)
      throw new Error(`A route's schema names the vocabulary ${name}, which the application does not give`);
    const marked = copyOf(object, (value) => value);
    delete marked[MARK];
    return Object.assign(marked, { enum: [...words] });
  }
  return copyOf(object, (value) => substitute(value, vocabularies));
}

/** A copy keeping each property's descriptor (the schema library's own markers stay hidden). */
function copyOf(
  object: Record<string | symbol, unknown>,
  map: (value: unknown) => unknown,
): Record<string | symbol, unknown> {
  const copy: Record<string | symbol, unknown> = {};
  for (const key of Reflect.ownKeys(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, key)!;
    Object.defineProperty(
      copy,
      key,
      'value' in descriptor ? { ...descriptor, value: map(descriptor.value) } : descriptor,
    );
  }
  return copy;
}
