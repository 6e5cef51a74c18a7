// Where the project's files are, the same whether this code runs from its TypeScript sources
// (src/…, through tsx) or compiled (dist/src/…, `npm start`): the nearest directory above this
// module holding the project's package.json. Files that are not code (migrations, docs, the
// devnet's Solidity sources, fixtures) are read from there, never relative to the running module.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
      if (name === 'purser') return dir;
    }
    if (dirname(dir) === dir) throw new Error(`no Purser package.json above ${from}`);
  }
}

/** The project's root directory (where package.json, docs/ and src/ are). */
export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** A path under the project's root. */
export function projectPath(...parts: string[]): string {
  return join(PROJECT_ROOT, ...parts);
}
