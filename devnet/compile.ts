// Compiles the devnet's Solidity test contracts with solc-js and caches the artifacts.
//
// The cache file in devnet/build/ is keyed by the sha256 of the sources, the compiler version
// and the settings, so only a change to one of those recompiles. Run it directly
// (`npx tsx devnet/compile.ts`) to warm the cache or to see compiler errors.

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';
import { projectPath } from '../src/core/paths.ts';

export const DEVNET_DIR = projectPath('devnet');
const DEFAULT_BUILD_DIR = join(DEVNET_DIR, 'build');

const require = createRequire(import.meta.url);

const SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const;

export interface Artifact {
  contractName: string;
  sourceName: string;
  abi: Abi;
  /** Creation code. */
  bytecode: Hex;
  /** Runtime code (without constructor-set immutables). */
  deployedBytecode: Hex;
}

export interface Artifacts {
  compilerVersion: string;
  /** sha256 of sources + compiler version + settings: the cache key. */
  sourceHash: string;
  contracts: Record<string, Artifact>;
}

export interface LoadArtifactsOptions {
  /** Folder holding the .sol files (default: this folder). */
  sourceDir?: string;
  /** Folder for the cached artifacts (default: devnet/build). */
  buildDir?: string;
  /** Compile even when a cached artifact exists. */
  force?: boolean;
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

interface Solc {
  version(): string;
  compile(input: string): string;
}

function solcPackageVersion(): string {
  const pkg = require('solc/package.json') as { version: string };
  return pkg.version;
}

async function readSources(sourceDir: string): Promise<Record<string, string>> {
  const names = (await readdir(sourceDir)).filter((f) => f.endsWith('.sol')).sort();
  const sources: Record<string, string> = {};
  for (const name of names) sources[name] = await readFile(join(sourceDir, name), 'utf8');
  return sources;
}

function hashSources(sources: Record<string, string>, compilerVersion: string): string {
  const h = createHash('sha256');
  h.update(`solc ${compilerVersion}\n`);
  h.update(JSON.stringify(SETTINGS));
  for (const [name, content] of Object.entries(sources)) {
    h.update(`\n--- ${name} ${Buffer.byteLength(content)}\n`);
    h.update(content);
  }
  return h.digest('hex');
}

/** Compiles `sources` (file name → Solidity text) and returns every contract's artifact. */
export function compileSources(sources: Record<string, string>): Omit<Artifacts, 'sourceHash'> {
  const solc = require('solc') as Solc;
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([name, content]) => [name, { content }])),
    settings: SETTINGS,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const contracts: Record<string, Artifact> = {};
  for (const [sourceName, byName] of Object.entries(output.contracts ?? {})) {
    for (const [contractName, c] of Object.entries(byName)) {
      if (contracts[contractName]) {
        throw new Error(
          `Two contracts named ${contractName} (${contracts[contractName].sourceName}, ${sourceName})`,
        );
      }
      contracts[contractName] = {
        contractName,
        sourceName,
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      };
    }
  }
  return { compilerVersion: solc.version(), contracts };
}

/**
 * Returns the compiled devnet contracts, compiling only when the sources, compiler or settings
 * changed since the cached build. Safe to call from several processes at once (atomic rename).
 */
export async function loadArtifacts(options: LoadArtifactsOptions = {}): Promise<Artifacts> {
  const sourceDir = options.sourceDir ?? DEVNET_DIR;
  const buildDir = options.buildDir ?? DEFAULT_BUILD_DIR;
  const sources = await readSources(sourceDir);
  if (Object.keys(sources).length === 0) throw new Error(`No .sol files in ${sourceDir}`);
  const sourceHash = hashSources(sources, solcPackageVersion());
  const cacheFile = join(buildDir, `artifacts-${sourceHash.slice(0, 16)}.json`);

  if (!options.force) {
    try {
      const cached = JSON.parse(await readFile(cacheFile, 'utf8')) as Artifacts;
      if (cached.sourceHash === sourceHash) return cached;
    } catch {
      // no cache yet (or unreadable): compile below
    }
  }

  const compiled = compileSources(sources);
  const artifacts: Artifacts = { ...compiled, sourceHash };
  await mkdir(buildDir, { recursive: true });
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(artifacts));
  await rename(tmp, cacheFile);
  // Drop builds of older sources.
  for (const f of await readdir(buildDir)) {
    if (f.startsWith('artifacts-') && f.endsWith('.json') && join(buildDir, f) !== cacheFile) {
      await rm(join(buildDir, f), { force: true });
    }
  }
  return artifacts;
}

/** The artifact of one contract, or an error naming the ones that exist. */
export function artifact(artifacts: Artifacts, contractName: string): Artifact {
  const found = artifacts.contracts[contractName];
  if (!found) {
    throw new Error(
      `No compiled contract ${contractName}; have ${Object.keys(artifacts.contracts).join(', ')}`,
    );
  }
  return found;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const built = await loadArtifacts({ force: process.argv.includes('--force') });
  const ms = Math.round(performance.now() - started);
  console.log(`solc ${built.compilerVersion}, ${built.sourceHash.slice(0, 16)} (${ms} ms)`);
  for (const c of Object.values(built.contracts)) {
    console.log(`  ${c.sourceName}:${c.contractName}  ${(c.bytecode.length - 2) / 2} bytes`);
  }
}
