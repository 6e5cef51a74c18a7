// The SDK's generated half is the route table's current document: a route changed without
// `npm run sdk:generate` fails here, so the typed client never drifts from the API.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSdkSchema, SDK_DIR } from '../src/cli/sdk-schema.ts';

describe('packages/sdk', () => {
  it('holds the OpenAPI document and the types of the current route table (npm run sdk:generate)', async () => {
    const fresh = await generateSdkSchema();
    const committed = {
      document: readFileSync(new URL('openapi.json', SDK_DIR), 'utf8'),
      types: readFileSync(new URL('src/schema.ts', SDK_DIR), 'utf8'),
    };
    // Compared whole, but reported by first difference: the files are large.
    const firstDifference = (a: string, b: string) => {
      const lines = [a.split('\n'), b.split('\n')];
      const at = lines[0]!.findIndex((line, i) => line !== lines[1]![i]);
      return at < 0 && lines[0]!.length === lines[1]!.length
        ? null
        : { line: at + 1, committed: lines[0]![at], fresh: lines[1]![at] };
    };
    expect(firstDifference(committed.document, fresh.document), 'run npm run sdk:generate').toBeNull();
    expect(firstDifference(committed.types, fresh.types), 'run npm run sdk:generate').toBeNull();
  });
});
