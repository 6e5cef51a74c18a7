// Imports point down the layers of the architecture: a module never imports the files that
// compose the modules (the route table, the jobs, the settlement effects, the account's life
// cycle), the core imports nothing above it, no import circle runs anywhere (feedback pays through
// billing, never the reverse), and the devnet comes in through its one door (src/devnet/door.ts), which the runtime imports dynamically in development only.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const SRC = join(ROOT, 'src');
const COMPOSITION = ['src/routes.ts', 'src/jobs.ts', 'src/settlement-effects.ts'];
/** What composes the modules into an account's life cycle: export, offboarding, purge. */
const LIFECYCLE = 'src/lifecycle/';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every file's relative imports (type-only ones included), as paths from the repository root. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?from '(\.{1,2}\/[^']+)'/gms)].map((m) =>
      relative(ROOT, resolve(dirname(file), m[1] ?? '')),
    );
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

/** The import circles (strongly connected components of more than one file), by Tarjan. */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('module layers', () => {
  const graph = importGraph();

  it('reads the imports of the source tree', () => {
    expect(graph.get('src/settlement-effects.ts')).toContain('src/modules/feedback/index.ts');
    expect(graph.get('src/modules/feedback/submit.ts')).toContain('src/modules/billing/index.ts');
  });

  it('no module imports the files that compose the modules', () => {
    const upward = [...graph.entries()].flatMap(([file, targets]) =>
      file.startsWith('src/modules/')
        ? targets
            .filter((t) => COMPOSITION.includes(t) || t.startsWith(LIFECYCLE))
            .map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(upward).toEqual([]);
  });

  it('the core imports nothing outside the core: not the configuration, no module, no adapter', () => {
    const outward = [...graph.entries()].flatMap(([file, targets]) =>
      file.startsWith('src/core/')
        ? targets.filter((t) => !t.startsWith('src/core/')).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(outward).toEqual([]);
    expect(graph.get('src/core/http/route-table.ts')).toContain('src/core/settings.ts');
  });

  it('no import circle runs anywhere in the source tree', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('nothing in modules/ or adapters/ imports the devnet', () => {
    const intoDevnet = [...graph.entries()].flatMap(([file, targets]) =>
      file.startsWith('src/modules/') || file.startsWith('src/adapters/')
        ? targets.filter((t) => t.startsWith('src/devnet/')).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(intoDevnet).toEqual([]);
  });

  it('what the runtime, the app and the route table load holds no devnet file: it comes in through its door', () => {
    const loaded = new Set<string>();
    const walk = (file: string): void => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const target of graph.get(file) ?? []) walk(target);
    };
    for (const root of ['src/runtime.ts', 'src/app.ts', 'src/routes.ts', 'src/jobs.ts', 'src/deps.ts'])
      walk(root);
    expect([...loaded].filter((f) => f.startsWith('src/devnet/'))).toEqual([]);
    // The door itself is there, imported with import() where the devnet is on.
    expect(readFileSync(join(SRC, 'runtime.ts'), 'utf8')).toContain("await import('./devnet/door.ts')");
  });
});
