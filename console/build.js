// The console's build: esbuild bundles console/src/main.tsx (Preact and the SDK's client with it)
// and console/src/styles.css into content-hashed files, and index.html is written naming them.
// bin/build.js writes the result to dist/console/ (what `npm start` serves); the service run from
// its sources builds the same files in memory on the first request for /console.

import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * The console's files, built with the esbuild module given: an array of `{ name, contents }`
 * (name relative to the console's root, e.g. `index.html`, `assets/main-3FQ2.js`).
 */
export async function buildConsole(esbuild, root) {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: 'console/src/main.tsx', styles: 'console/src/styles.css' },
    outdir: join(root, 'console-out'),
    entryNames: 'assets/[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // The SDK workspace exports its TypeScript sources under this condition.
    conditions: ['purser-source'],
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
    metafile: false,
  });
  const files = result.outputFiles.map((f) => ({
    name: `assets/${basename(f.path)}`,
    contents: Buffer.from(f.contents),
  }));
  const script = files.find((f) => /^assets\/main-.*\.js$/.test(f.name));
  const style = files.find((f) => /^assets\/styles-.*\.css$/.test(f.name));
  if (!script || !style) throw new Error('the console build gave no script or no stylesheet');
  const html = readFileSync(join(root, 'console', 'index.html'), 'utf8')
    .replace('%SCRIPT%', `/console/${script.name}`)
    .replace('%STYLE%', `/console/${style.name}`);
  // The stylesheet's own entry gives an empty script beside it; only the real files are served.
  return [{ name: 'index.html', contents: Buffer.from(html) }, script, style];
}
