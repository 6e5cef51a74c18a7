#!/usr/bin/env node
// The package bin. Runs the compiled service (dist/, `node bin/build.js`) when it is up to date
// with the sources; otherwise the TypeScript sources through tsx's loader, as in development.
import { pathToFileURL } from 'node:url';
import { buildIsStale, DIST_ENTRY } from './build.js';

if (!buildIsStale()) {
  await import(pathToFileURL(DIST_ENTRY).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
