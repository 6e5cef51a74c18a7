// Each module owns its tables: its SQL names only the tables it declares (in its Kysely schema
// augmentation, `declare module '…/db/schema.ts'`) and the core's, and asks the owner's functions
// for the rest (docs/architecture.md). Where one statement must read several modules' tables (one
// snapshot), the owners give the pieces as expressions or subqueries.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/** `src/modules/<name>/…` → `<name>`; anything else under src/ is `core`. */
function moduleOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts[0] === 'modules' ? (parts[1] ?? 'core') : 'core';
}

/** Table → the module whose schema augmentation declares it. */
function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const block of text.matchAll(/declare module '[^']*db\/schema\.ts' \{([\s\S]*?)\n\}/g)) {
      const database = /interface Database \{([\s\S]*?)\n {2}\}/.exec(block[1] ?? '')?.[1] ?? '';
      for (const table of database.matchAll(/^\s+([a-z_][a-z0-9_]*)\??:/gm)) {
        const name = table[1]!;
        const owner = moduleOf(file);
        if (owners.has(name) && owners.get(name) !== owner) throw new Error(`${name} is declared twice`);
        owners.set(name, owner);
      }
    }
  }
  return owners;
}

/** The tables a file's queries name: Kysely's builders and raw SQL's FROM, JOIN, UPDATE, INTO. */
function tablesNamed(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(
    /\.(?:selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin)\(\s*'([a-z_][a-z0-9_]*)/g,
  ))
    names.add(m[1]!);
  for (const m of text.matchAll(/\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_][a-z0-9_]*)/g)) names.add(m[1]!);
  return names;
}

describe('modules own their tables', () => {
  const owners = tableOwners();

  it('reads the owners from the schema declarations', () => {
    expect(owners.get('intents')).toBe('intents');
    expect(owners.get('ledger_entries')).toBe('ledger');
    expect(owners.get('jobs')).toBe('core');
  });

  it("no module's SQL names another module's table", () => {
    const crossings = new Set<string>();
    for (const file of sourceFiles(join(SRC, 'modules'))) {
      const module = moduleOf(file);
      for (const table of tablesNamed(readFileSync(file, 'utf8'))) {
        const owner = owners.get(table);
        if (owner && owner !== module && owner !== 'core') crossings.add(`${module} -> ${table}`);
      }
    }
    expect([...crossings].sort()).toEqual([]);
  });

  it('the account life cycle (src/lifecycle/) names no table: it asks the modules', () => {
    const named = sourceFiles(join(SRC, 'lifecycle')).flatMap((file) =>
      [...tablesNamed(readFileSync(file, 'utf8'))]
        .filter((t) => owners.has(t))
        .map((t) => `${relative(SRC, file)} -> ${t}`),
    );
    expect(named).toEqual([]);
  });
});
