#!/usr/bin/env node
// Compiles the service (src/ and devnet/, tests excluded) to JavaScript in dist/ with tsc
// (tsconfig.build.json), so `npm start` and the `purser` command run without compiling
// TypeScript at run time.
//
//   node bin/build.js              build now
//   node bin/build.js --if-stale   build only when a source is newer than the last build (what
//                                  `npm start` runs: a failed build is reported, not fatal)
//
// The last successful build leaves dist/.built; a source (or tsconfig) with a later
// modification time makes the build stale. Without TypeScript installed (an install without
// dev dependencies) nothing is built and the `purser` command runs the sources through tsx.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const DIST_ENTRY = join(ROOT, 'dist', 'src', 'main.js');
const STAMP = join(ROOT, 'dist', '.built');
const SOURCE_DIRS = ['src', 'devnet'];
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];

/** The latest modification time among the sources the build compiles, in ms. */
function newestSource() {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'build' && entry.name !== 'node_modules') visit(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        newest = Math.max(newest, statSync(path).mtimeMs);
      }
    }
  };
  for (const dir of SOURCE_DIRS) visit(join(ROOT, dir));
  for (const file of CONFIGS) newest = Math.max(newest, statSync(join(ROOT, file)).mtimeMs);
  return newest;
}

/** Whether dist/ is missing or older than a source. */
export function buildIsStale() {
  if (!existsSync(STAMP) || !existsSync(DIST_ENTRY)) return true;
  return statSync(STAMP).mtimeMs < newestSource();
}

/** The TypeScript compiler's entry, or null when TypeScript is not installed. */
function tscPath() {
  try {
    return createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

/**
 * Runs tsc; returns the exit code (0 when built, or when there is nothing to build with). With
 * `lenient` (what `npm start` asks for), a failed build returns 0 too: the build stays stale, so
 * the `purser` command runs the sources through tsx, as before there was a build.
 */
export function build(lenient = false) {
  const tsc = tscPath();
  if (!tsc) {
    console.error(
      'purser: TypeScript is not installed, so nothing is compiled (the sources run through tsx).',
    );
    return 0;
  }
  const started = performance.now();
  // The stamp's time is the build's start: a source saved during the build makes it stale again.
  const startedAt = new Date();
  console.error('purser: compiling src/ and devnet/ to dist/ …');
  const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    if (lenient) {
      console.error('purser: the build failed (above), so this start runs the sources through tsx.');
      return 0;
    }
    console.error(
      'purser: the build failed (above); fix the error, or run the sources with `npx tsx src/main.ts`.',
    );
    return result.status ?? 1;
  }
  writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  utimesSync(STAMP, startedAt, startedAt);
  console.error(`purser: compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  process.exit(ifStale && !buildIsStale() ? 0 : build(ifStale));
}
