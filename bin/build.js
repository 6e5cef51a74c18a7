#!/usr/bin/env node
// Builds the service for `npm start` and the `purser` command: esbuild bundles src/main.ts, with
// the devnet/ modules and the dependencies it imports, into ESM JavaScript in dist/ (main.js,
// and chunks/ for what the commands load on demand), so a start neither compiles TypeScript
// nor resolves and reads several hundred modules one by one.
//
//   node bin/build.js              build now
//   node bin/build.js --if-stale   build only when an input is newer than the last build (what
//                                  `npm start` runs: a failed build is reported, not fatal)
//
// The last successful build leaves dist/.built; a source, tsconfig.json, package.json or the
// installed dependencies' lockfile with a later modification time makes the build stale.
// Without esbuild installed nothing is built and the `purser` command runs the sources through
// tsx (which needs esbuild as well, so in practice it is always there).

import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildConsole } from '../console/build.js';

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const DIST = join(ROOT, 'dist');
export const DIST_ENTRY = join(DIST, 'main.js');
const STAMP = join(DIST, '.built');
const SOURCE_DIRS = ['src', 'devnet', 'console'];
/** Files of the sources that make the build stale when they change (tests never do). */
const SOURCE_FILE = /\.(ts|tsx|css|html|js)$/;
// Besides the sources: the compiler settings, and what says which dependencies are installed
// (the bundle holds their code, so an `npm install` that changes one makes the build stale).
const INPUTS = ['tsconfig.json', 'package.json', 'package-lock.json', 'node_modules/.package-lock.json'];

/**
 * Packages left out of the bundle and loaded from node_modules at run time: those that read
 * files beside their own modules (PGlite's WebAssembly, anvil's binary, solc, pino's and
 * thread-stream's workers, the Swagger UI's static files and the swagger plugin's
 * package.json), and every development dependency (only development commands load them).
 */
const ALWAYS_EXTERNAL = [
  '@electric-sql/pglite',
  '@foundry-rs/anvil',
  'solc',
  'pino',
  'thread-stream',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'pg-native',
];

/** The latest modification time among the build's inputs, in ms. */
function newestInput() {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'build' && entry.name !== 'node_modules') visit(path);
      } else if (SOURCE_FILE.test(entry.name) && !entry.name.endsWith('.test.ts')) {
        newest = Math.max(newest, statSync(path).mtimeMs);
      }
    }
  };
  for (const dir of SOURCE_DIRS) visit(join(ROOT, dir));
  for (const file of INPUTS) {
    if (existsSync(join(ROOT, file))) newest = Math.max(newest, statSync(join(ROOT, file)).mtimeMs);
  }
  return newest;
}

/** Whether dist/ is missing or older than an input. */
export function buildIsStale() {
  if (!existsSync(STAMP) || !existsSync(DIST_ENTRY)) return true;
  return statSync(STAMP).mtimeMs < newestInput();
}

/** esbuild's module, or null when it is not installed. */
async function loadEsbuild() {
  try {
    const path = createRequire(join(ROOT, 'package.json')).resolve('esbuild');
    return await import(pathToFileURL(path).href);
  } catch {
    return null;
  }
}

/** The packages the bundle leaves to node_modules (ALWAYS_EXTERNAL and the dev dependencies). */
function externals() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const names = [...ALWAYS_EXTERNAL, ...Object.keys(pkg.devDependencies ?? {})];
  return names.flatMap((name) => [name, `${name}/*`]);
}

/**
 * Bundles into dist/; returns the exit code (0 when built, or when there is nothing to build
 * with). With `lenient` (what `npm start` asks for), a failed build returns 0 too: the build
 * stays stale, so the `purser` command runs the sources through tsx.
 */
export async function build(lenient = false) {
  const esbuild = await loadEsbuild();
  if (!esbuild) {
    console.error('purser: esbuild is not installed, so nothing is built (the sources run through tsx).');
    return 0;
  }
  const started = performance.now();
  // The stamp's time is the build's start: a source saved during the build makes it stale again.
  const startedAt = new Date();
  console.error('purser: building dist/ …');
  // Built beside dist/ and then moved in its place, so a `purser` command starting meanwhile
  // finds either the old build or the new one, never half of one.
  const next = `${DIST}.next-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  try {
    await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: { main: 'src/main.ts' },
      outdir: next,
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20.19',
      external: externals(),
      // Bundled CommonJS packages call require(); in an ES module it is made here.
      banner: {
        js: "import { createRequire as purserCreateRequire } from 'node:module'; const require = purserCreateRequire(import.meta.url);",
      },
      // Source maps beside the chunks, without the sources' text: run with
      // NODE_OPTIONS=--enable-source-maps for stack traces that name src/ files and lines.
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'warning',
    });
    // The console's static files (console/build.js), served from dist/console/.
    for (const file of await buildConsole(esbuild, ROOT)) {
      mkdirSync(dirname(join(next, 'console', file.name)), { recursive: true });
      writeFileSync(join(next, 'console', file.name), file.contents);
    }
  } catch (err) {
    rmSync(next, { recursive: true, force: true });
    const how = lenient
      ? 'so this start runs the sources through tsx.'
      : 'fix the error, or run the sources with `npx tsx src/main.ts`.';
    console.error(
      `purser: the build failed (${err instanceof Error ? err.message.split('\n')[0] : err}); ${how}`,
    );
    return lenient ? 0 : 1;
  }
  const stamp = join(next, '.built');
  writeFileSync(stamp, `${startedAt.toISOString()}\n`);
  utimesSync(stamp, startedAt, startedAt);
  const previous = `${DIST}.previous-${process.pid}`;
  if (existsSync(DIST)) renameSync(DIST, previous);
  renameSync(next, DIST);
  rmSync(previous, { recursive: true, force: true });
  console.error(`purser: built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  process.exit(ifStale && !buildIsStale() ? 0 : await build(ifStale));
}
