// @purser/sdk as someone outside this repository gets it: packed with `npm pack` (its build runs
// first), installed from the tarball into a scratch project with viem, type-checked by a plain
// `tsc` setup and run by plain `node` against a running Purser.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startListeningService, type ListeningService } from './support/listening-service.ts';
import { REPO_ROOT } from './support/service-process.ts';

const devnet = inject('devnet');
let service: ListeningService;
const scratch = mkdtempSync(join(tmpdir(), 'purser-sdk-user-'));

beforeAll(async () => {
  service = await startListeningService(devnet);
});
afterAll(async () => {
  await service?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const versionOf = (pkg: string) =>
  (
    JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

// Asynchronous: the service answering the client runs in this process, so nothing may block it.
const run = async (file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  (await promisify(execFile)(file, args, { cwd, env, encoding: 'utf8' })).stdout;

describe('@purser/sdk from its tarball', () => {
  it('installs into a project outside the repository, type-checks with tsc and runs with node', async () => {
    // The tarball: the compiled client and its declarations, no sources, tests or OpenAPI document.
    const packed = await run(
      'npm',
      ['pack', '--silent', '--pack-destination', scratch],
      join(REPO_ROOT, 'packages/sdk'),
    );
    const tarball = packed.trim().split('\n').at(-1)!;
    const files = (await run('tar', ['-tzf', join(scratch, tarball)], scratch)).trim().split('\n');
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files.filter((f) => /\.test\.|\/test\/|openapi\.json|\/src\//.test(f))).toEqual([]);

    const project = join(scratch, 'agent');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'agent', private: true, type: 'module' }),
    );
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        join(scratch, tarball),
        `viem@${versionOf('viem')}`,
        `@types/node@${versionOf('@types/node')}`,
      ],
      project,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          skipLibCheck: true,
          outDir: 'out',
        },
      }),
    );
    writeFileSync(
      join(project, 'main.ts'),
      [
        "import { ok, Purser } from '@purser/sdk';",
        "const purser = new Purser({ baseUrl: process.env['PURSER_URL'] ?? '' });",
        "const registry = await ok(purser.api.GET('/v1/tokens', { params: { query: { chain_id: '8453' } } }));",
        'const chain: number = registry.chains[0]!.chain_id;',
        '// Never called: only the type checker sees it.',
        'export const wrongPath = () =>',
        '  // @ts-expect-error: not a path of the API, so the typed client refuses it',
        "  purser.api.GET('/v1/no-such-path');",
        "console.log(JSON.stringify({ chain, usdc: registry.chains[0]!.tokens.some((t) => t.symbol === 'USDC') }));",
        '',
      ].join('\n'),
    );
    // A plain tsc, the repository's compiler but none of its settings.
    await run(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], project);
    const out = await run(process.execPath, ['out/main.js'], project, {
      ...process.env,
      PURSER_URL: service.url,
    });
    expect(JSON.parse(out.trim())).toEqual({ chain: 8453, usdc: true });
  }, 240_000);
});
