// Every event kind the code emits is catalogued in docs/events.md, so receivers can rely on the
// table: a new kind without its row fails here.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_EVENT_KIND } from '../src/modules/webhooks/service.ts';

const ROOT = new URL('../', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

function emittedKinds(): Set<string> {
  const kinds = new Set<string>();
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const call of text.matchAll(/\b(emitEvent|eventCall)\(/g)) {
      const window = text.slice(call.index, call.index + 500);
      const kind = /kind: '([a-z_]+\.[a-z_]+)'/.exec(window);
      if (kind?.[1]) kinds.add(kind[1]);
    }
  }
  return kinds;
}

describe('docs/events.md', () => {
  it('has a row for every event kind the code emits', () => {
    const doc = readFileSync(join(ROOT, 'docs/events.md'), 'utf8');
    const kinds = emittedKinds();
    expect(kinds.size).toBeGreaterThan(10);
    const missing = [...kinds].filter((k) => !doc.includes(`| \`${k}\` |`));
    expect(missing).toEqual([]);
  });

  it('has a row for the test event that POST /v1/webhooks/test sends', () => {
    const doc = readFileSync(join(ROOT, 'docs/events.md'), 'utf8');
    expect(TEST_EVENT_KIND).toBe('test');
    expect(doc).toContain(`| \`${TEST_EVENT_KIND}\` |`);
  });
});
