// Text PostgreSQL cannot store: the NUL character (text columns refuse it, jsonb refuses `\u0000`)
// and unpaired UTF-16 surrogates (not Unicode; jsonb refuses their escapes). JSON, query strings
// and percent-escaped paths can all carry them, so every request is searched for them once, at
// the edge, before anything reads the database: such a request is a 400 naming the field, never
// a 500 from a statement halfway through.

import { AppError } from '../errors/app-error.ts';

// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` holds a character PostgreSQL cannot store. */
export function isUnstorableText(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * The first place in `value` (any depth, object keys included) holding text PostgreSQL cannot
 * store, named from `at` (`body.agents[0].name`), or null when there is none.
 */
export function findUnstorableText(value: unknown, at: string): string | null {
  if (typeof value === 'string') return isUnstorableText(value) ? at : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (isUnstorableText(key)) return `a field name in ${at}`;
      const found = findUnstorableText(child, fieldOf(at, key));
      if (found) return found;
    }
  }
  return null;
}

/**
 * Refuses a request whose path parameters, query or body hold text PostgreSQL cannot store:
 * `400 INVALID_REQUEST` naming the field. The same check for every route.
 */
export function refuseUnstorableText(parts: { params: unknown; query: unknown; body: unknown }): void {
  const found =
    findUnstorableText(parts.params, 'params') ??
    findUnstorableText(parts.query, 'query') ??
    findUnstorableText(parts.body, 'body');
  if (found === null) return;
  throw new AppError(
    'INVALID_REQUEST',
    `Invalid request: ${found} contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.`,
    {
      remediation:
        'Send text as valid Unicode without the NUL character (U+0000); nothing was done, so fix the field and retry.',
    },
  );
}

function fieldOf(parent: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}
