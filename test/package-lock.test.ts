// The committed lockfile is what a fresh clone installs: `npm install` must not add to it, and
// nothing in it may refuse the oldest Node.js the project supports.

import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  optionalDependencies?: Record<string, string>;
}

const root = new URL('../', import.meta.url);
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string };
};

describe('package-lock.json', () => {
  it('lists every optional platform package, so npm install on another platform adds nothing', () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        // npm records an optional dependency beside its parent or hoisted to the top.
        const nested = `${path}/node_modules/${name}`;
        if (!lock.packages[nested] && !lock.packages[`node_modules/${name}`])
          missing.push(`${path} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('holds no package whose engines refuse the oldest supported Node.js (no EBADENGINE on install)', () => {
    const oldest = semver.minVersion(manifest.engines.node);
    expect(oldest?.major).toBe(20);
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (path === '' || !range) continue;
      if (!semver.satisfies(oldest!, range)) refusing.push(`${path}@${entry.version} wants node ${range}`);
    }
    expect(refusing).toEqual([]);
  });
});
