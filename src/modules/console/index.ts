// The console in the browser, served at /console by the service itself (docs/console.md): static
// files built at build time (console/build.js into dist/console/), same origin as the API, under a
// strict Content-Security-Policy. Every path below /console that is not one of its files is a view
// of the app (/console/intents, /console/policies/…), so a reload or a shared link opens it.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { AppError } from '../../core/errors/app-error.ts';
import { PROJECT_ROOT, projectPath } from '../../core/paths.ts';
import type * as ConsoleBuildModule from '../../../console/build.js';

type ConsoleBuild = typeof ConsoleBuildModule;

/** Where the console is served. */
export const CONSOLE_PATH = '/console';

/**
 * Scripts, styles and everything else come from this origin only; nothing inline, no frame may
 * hold the console, no form posts anywhere (the app calls the API with fetch).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface ServedFile {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

function typeOf(name: string): string {
  return TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
}

/** The built files in dist/console/, when this is the build (bin/build.js wrote them). */
function readBuiltFiles(): Map<string, ServedFile> | null {
  const dir = projectPath('dist', 'console');
  if (!import.meta.url.endsWith('.js') || !existsSync(join(dir, 'index.html'))) return null;
  const files = new Map<string, ServedFile>();
  files.set('index.html', { body: readFileSync(join(dir, 'index.html')), type: TYPES['html']! });
  for (const name of readdirSync(join(dir, 'assets')))
    files.set(`assets/${name}`, { body: readFileSync(join(dir, 'assets', name)), type: typeOf(name) });
  return files;
}

/** The same files built in memory from console/ (the service run from its TypeScript sources). */
async function buildInMemory(): Promise<Map<string, ServedFile>> {
  const require = createRequire(projectPath('package.json'));
  const esbuild: unknown = await import(pathToFileURL(require.resolve('esbuild')).href);
  // Loaded by path, so the service's own bundle never holds the console's build.
  const { buildConsole } = (await import(
    pathToFileURL(projectPath('console', 'build.js')).href
  )) as ConsoleBuild;
  const built = await buildConsole(esbuild, PROJECT_ROOT);
  return new Map(built.map((f) => [f.name, { body: f.contents, type: typeOf(f.name) }]));
}

let files: Promise<Map<string, ServedFile>> | null = null;

/** The console's files: built once per process, on the first request that needs them. */
function consoleFiles(): Promise<Map<string, ServedFile>> {
  files ??= Promise.resolve(readBuiltFiles() ?? buildInMemory()).catch((err: unknown) => {
    files = null;
    throw err;
  });
  return files;
}

function send(reply: FastifyReply, file: ServedFile, immutable: boolean) {
  return reply
    .header('content-type', file.type)
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    .send(file.body);
}

/** Serves the console: its hashed assets, and index.html for every view's path. */
export function registerConsole(fastify: FastifyInstance): void {
  const page = async (_req: unknown, reply: FastifyReply) => {
    const index = (await consoleFiles()).get('index.html')!;
    return send(reply, index, false);
  };
  fastify.get(CONSOLE_PATH, page);
  fastify.get(`${CONSOLE_PATH}/assets/:name`, async (req, reply) => {
    const { name } = req.params as { name: string };
    const file = (await consoleFiles()).get(`assets/${name}`);
    if (!file)
      throw new AppError('NOT_FOUND', `The console has no file assets/${name}.`, {
        remediation: 'Reload /console: a newer build names its files differently.',
      });
    return send(reply, file, true);
  });
  fastify.get(`${CONSOLE_PATH}/*`, page);
}
