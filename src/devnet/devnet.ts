// The devnet: one anvil per chain id, with Purser's test contracts deployed at the same
// addresses on every run (anvil's default account #0 deploys them from nonce 0, in a fixed order).
//
// Development and tests only. The anvil processes are children of this process: stop() ends them,
// and so does this process's exit (and SIGINT/SIGTERM when nothing else handles those).

import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Address } from 'viem';
import { loadArtifacts } from '../../devnet/compile.ts';
import { busyPorts } from '../core/ports.ts';
import { type DevnetBundler } from './bundler.ts';
import { startAggregatorFakes, type FakeChain } from './fakes/index.ts';
import { startClobFake, type ClobFakeMarket } from './fakes/clob.ts';
import { startKalshiFake } from './fakes/kalshi.ts';
import { startIrisFake, type IrisFakeChain } from './fakes/iris.ts';
import { startSafeTxServiceFake } from './fakes/safe-tx-service.ts';
import { seedDevnetMarkets, type DevnetPool } from './markets.ts';

export type { DevnetPool } from './markets.ts';
import {
  type DevnetContracts,
  type DevnetToken,
  type DevnetPolymarketContracts,
  devnetPolymarketContracts,
  DEVNET_DEPLOYER,
  DEVNET_CCTP_DOMAINS,
  DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
  DEVNET_POLYMARKET_MARKETS,
  POLYGON_CHAIN_ID,
} from './plan.ts';
import {
  type DevnetLog,
  type RunningAnvil,
  logger,
  DevnetPortInUseError,
  anvilBinaryPath,
  freePorts,
  devnetStateFile,
  spawnAnvil,
  installExitHooks,
} from './anvil.ts';
import { deployChain, deployEntryPoint, entryPointBytecode, startChainBundler } from './deploy.ts';
export {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  CREATE2_DEPLOYER,
  DEVNET_BUNDLER_PRIVATE_KEY,
  DEVNET_CANONICAL_TOKENS,
  DEVNET_CCTP_ATTESTER,
  DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
  DEVNET_CCTP_DOMAINS,
  DEVNET_DEPLOYER,
  DEVNET_DEPLOYER_PRIVATE_KEY,
  DEVNET_FEED_DECIMALS,
  DEVNET_POLYMARKET_MARKETS,
  DEVNET_RAMP_ADMIN,
  DEVNET_RAMP_ADMIN_PRIVATE_KEY,
  DEVNET_START_PRICES_USD,
  ENTRY_POINT_V07,
  POLYGON_CHAIN_ID,
  deploymentPlan,
  devnetPolymarketContracts,
  expectedDevnetContracts,
  type DevnetContracts,
  type DevnetPolymarketContracts,
  type DevnetToken,
} from './plan.ts';
export {
  DevnetPortInUseError,
  anvilBinaryPath,
  devnetStateFile,
  reclaimLeftoverAnvils,
  type DevnetLog,
} from './anvil.ts';
export { DevnetOutdatedStateError } from './deploy.ts';

export interface DevnetChain {
  chainId: number;
  rpcUrl: string;
  port: number;
  deployer: Address;
  contracts: DevnetContracts;
  tokens: DevnetToken[];
  /** Price feeds by pair (`ETH/USD`): 8 decimals, Chainlink's AggregatorV3Interface. */
  priceFeeds: Record<string, Address>;
  /** The liquidity pools seeded at start (Base only), by venue. */
  pools: DevnetPool[];
  /**
   * The devnet bundler's ERC-4337 JSON-RPC URL (src/devnet/bundler.ts, on 127.0.0.1), on chains
   * with EntryPoint v0.7 and Kernel: what `BUNDLER_URL_<chainId>` defaults to in development.
   */
  bundlerUrl?: string;
  /**
   * Polygon (137) only: the Polymarket CLOB fake on loopback (src/devnet/fakes/clob.ts: CLOB V2's
   * REST API, which @polymarket/clob-client-v2 uses unchanged), what the Polymarket adapter uses
   * instead of clob.polymarket.com in development. Orders are signed for this chain and
   * Polymarket's V2 exchange addresses (the client's); collateral balances and allowances are this
   * chain's pUSD (`contracts.pusd`), and Safe owners (signature type 2) are asked on this chain.
   * `markets` are the ones it lists (DEVNET_POLYMARKET_MARKETS). Its API keys are kept in
   * `<stateDir>/polymarket-clob-api-keys.json` when the devnet keeps state. `contracts`: the
   * chain's Polymarket contracts in one object (DevnetPolymarketContracts: pUSD, USDC.e, the
   * ramps, the CTF and the three spenders), when its plan has them.
   */
  polymarket?: { clobUrl: string; markets: ClobFakeMarket[]; contracts?: DevnetPolymarketContracts };
  /**
   * Polygon (137) only: the Safe Transaction Service fake on loopback
   * (src/devnet/fakes/safe-tx-service.ts: `GET /api/v1/owners/{address}/safes/` and
   * `GET /api/v2/owners/{address}/safes/`), answering live from this chain's Safes (those made by
   * `contracts.safeProxyFactory`). The base URL without `/api`: @safe-global/api-kit takes this
   * URL followed by `/api` as its `txServiceUrl`.
   */
  safeTxServiceUrl?: string;
}

/** What a devnet is, as plain data (structured-cloneable: safe for vitest's provide/inject). */
export interface DevnetInfo {
  chains: Record<number, DevnetChain>;
  /**
   * The aggregator fakes on loopback (0x and KyberSwap formats, pricing and swapping through the
   * devnet's Uniswap v2 router), when a chain has one: what the venue adapters use instead of the
   * vendors' URLs and key in development.
   */
  aggregators?: { zeroExBaseUrl: string; zeroExApiKey: string; kyberswapBaseUrl: string; chainIds: number[] };
  /**
   * The Iris fake on loopback (src/devnet/fakes/iris.ts: Circle's CCTP V2 attestation API,
   * `GET /v2/messages/{sourceDomainId}?transactionHash=…`), when both CCTP chains (8453 and 137)
   * run with their CCTP contracts: what the attestation adapter uses instead of
   * iris-api.circle.com in development. `attester` signs; `domains` maps chain id → CCTP domain.
   */
  attestation?: { irisBaseUrl: string; attester: Address; domains: Record<number, number> };
  /**
   * The Kalshi fake on loopback (src/devnet/fakes/kalshi.ts: the trade API's signed balance read),
   * what the Kalshi adapter uses instead of Kalshi in development, with one API key of its own that
   * it accepts: `keyId` and its RSA private key (`privateKeyPem`; also written to
   * `<stateDir>/kalshi-dev-key.pem` when the devnet keeps state). Not a secret: a development key.
   */
  kalshi?: { apiUrl: string; keyId: string; privateKeyPem: string };
}

export interface Devnet extends DevnetInfo {
  /** A plain-data copy without stop(). */
  info(): DevnetInfo;
  /** Ends every anvil of this devnet (idempotent). */
  stop(): Promise<void>;
}

export interface StartDevnetOptions {
  chainIds: number[];
  /** Chain i listens on basePort + i; 0 (default) picks free ports. */
  basePort?: number;
  host?: string;
  log?: DevnetLog;
  /** Path of the anvil binary (default: the one from the @foundry-rs/anvil npm package). */
  anvilPath?: string;
  /** Extra anvil flags, e.g. ['--block-time', '1']. */
  anvilArgs?: string[];
  /** How long to wait for one anvil to answer (default 20 s). */
  startTimeoutMs?: number;
  /**
   * Deploy the real EntryPoint v0.7 (from the @account-abstraction/contracts dev dependency) at
   * its canonical address. Default: when the package is installed; true makes it required.
   */
  entryPoint?: boolean;
  /**
   * Keep the chains' state in this directory (`chain-<id>.json`): each anvil loads its file at
   * start, when there is one, and writes it back when it stops (SIGTERM or SIGINT). Without it
   * every start is a fresh chain.
   */
  stateDir?: string;
  /** Start a devnet bundler on each chain with EntryPoint v0.7 and Kernel (default true). */
  bundler?: boolean;
  /**
   * For tests of upgrades: deploy only the first `planLength` steps of each chain's plan, as an
   * earlier version of the devnet did (a later start with the full plan deploys the rest).
   */
  planLength?: number;
}

const KALSHI_DEV_KEY_FILE = 'kalshi-dev-key.pem';

/**
 * The devnet's Kalshi API key: an RSA key pair kept in the state directory (so a credential stored
 * with it keeps working across restarts), else made for this run. The key id is derived from the
 * public key.
 */
function devnetKalshiKey(stateDir: string | undefined): {
  keyId: string;
  privateKeyPem: string;
  publicKeyPem: string;
} {
  const file = stateDir ? join(resolve(stateDir), KALSHI_DEV_KEY_FILE) : null;
  let privateKeyPem: string;
  if (file && existsSync(file)) {
    privateKeyPem = readFileSync(file, 'utf8');
  } else {
    privateKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    if (file) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, privateKeyPem, { mode: 0o600 });
    }
  }
  const publicKeyPem = createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
  const h = createHash('sha256').update(publicKeyPem).digest('hex');
  const keyId = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  return { keyId, privateKeyPem: privateKeyPem.trim(), publicKeyPem };
}

// ------------------------------------------------------------------------------ public API

/** Starts one anvil per chain id, deploys the devnet contracts on each, and returns where they are. */
export async function startDevnet(options: StartDevnetOptions): Promise<Devnet> {
  const chainIds = [...new Set(options.chainIds)];
  if (chainIds.length === 0) throw new Error('startDevnet: no chain ids');
  const host = options.host ?? '127.0.0.1';
  const basePort = options.basePort ?? 0;
  const log = logger(options.log);
  const binary = options.anvilPath ?? anvilBinaryPath();
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const extraArgs = options.anvilArgs ?? [];
  const epBytecode = options.entryPoint === false ? null : entryPointBytecode();
  if (options.entryPoint === true && !epBytecode) {
    throw new Error('startDevnet: entryPoint requested but @account-abstraction/contracts is not installed');
  }

  installExitHooks();
  const artifactsPromise = loadArtifacts();
  artifactsPromise.catch(() => undefined); // awaited below; don't report it unhandled if anvil fails first
  const anvils: RunningAnvil[] = [];
  const bundlers: DevnetBundler[] = [];
  let stopFakes: (() => Promise<void>) | null = null;
  let stopIris: (() => Promise<void>) | null = null;
  let stopClob: (() => Promise<void>) | null = null;
  let stopKalshi: (() => Promise<void>) | null = null;
  let stopSafeTxService: (() => Promise<void>) | null = null;
  let aggregators: DevnetInfo['aggregators'];
  let attestation: DevnetInfo['attestation'];
  const stopAll = async (): Promise<void> => {
    await stopFakes?.();
    await stopIris?.();
    await stopClob?.();
    await stopKalshi?.();
    await stopSafeTxService?.();
    await Promise.all(bundlers.map((b) => b.stop()));
    await Promise.all(anvils.map((a) => a.stop()));
  };

  const stateDir = options.stateDir;
  const loaded = new Set<number>();
  if (stateDir) {
    mkdirSync(resolve(stateDir), { recursive: true });
    for (const id of chainIds) if (existsSync(devnetStateFile(stateDir, id))) loaded.add(id);
  }

  try {
    if (basePort > 0) {
      const wanted = chainIds.map((chainId, i) => ({ chainId, port: basePort + i }));
      const busy = await busyPorts(
        wanted.map((w) => w.port),
        host,
      );
      if (busy.length > 0) {
        throw new DevnetPortInUseError(
          wanted.filter((w) => busy.includes(w.port)),
          host,
        );
      }
      const started = await Promise.allSettled(
        chainIds.map((id, i) => spawnAnvil(id, basePort + i, host, binary, extraArgs, timeoutMs, stateDir)),
      );
      for (const s of started) if (s.status === 'fulfilled') anvils.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
    } else {
      // A picked port can be taken before anvil binds it: retry that chain on another port.
      const ports = await freePorts(chainIds.length, host);
      const started = await Promise.allSettled(
        chainIds.map(async (id, i) => {
          let port = ports[i] ?? 0;
          for (let attempt = 1; ; attempt++) {
            try {
              anvils.push(await spawnAnvil(id, port, host, binary, extraArgs, timeoutMs, stateDir));
              return;
            } catch (err) {
              if (attempt >= 3) throw err;
              port = (await freePorts(1, host))[0] ?? 0;
            }
          }
        }),
      );
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
    }
    anvils.sort((a, b) => chainIds.indexOf(a.chainId) - chainIds.indexOf(b.chainId));

    const artifacts = await artifactsPromise;
    const chains: Record<number, DevnetChain> = {};
    await Promise.all(
      anvils.map(async (anvil) => {
        const deployed = await deployChain(
          anvil,
          artifacts,
          loaded.has(anvil.chainId),
          log,
          options.planLength,
        );
        if (epBytecode) deployed.contracts.entryPoint = await deployEntryPoint(anvil, epBytecode);
        const pools = await seedDevnetMarkets({ chainId: anvil.chainId, rpcUrl: anvil.rpcUrl, ...deployed });
        const c = deployed.contracts;
        let bundlerUrl: string | undefined;
        if (options.bundler !== false && c.entryPoint && c.kernelFactory) {
          const bundler = await startChainBundler(anvil);
          bundlers.push(bundler);
          bundlerUrl = bundler.url;
        }
        chains[anvil.chainId] = {
          chainId: anvil.chainId,
          rpcUrl: anvil.rpcUrl,
          port: anvil.port,
          deployer: DEVNET_DEPLOYER,
          ...deployed,
          pools,
          ...(bundlerUrl ? { bundlerUrl } : {}),
        };
        log(`devnet chain ${anvil.chainId} at ${anvil.rpcUrl} (usdc ${deployed.contracts.usdc})`);
      }),
    );

    // The aggregator fakes quote through the devnet's Uniswap v2 router, where a chain has one.
    const fakeChains: Record<number, FakeChain> = {};
    for (const c of Object.values(chains)) {
      if (c.contracts.uniswapV2Router02)
        fakeChains[c.chainId] = { rpcUrl: c.rpcUrl, router: c.contracts.uniswapV2Router02 };
    }
    if (Object.keys(fakeChains).length > 0) {
      const fakes = await startAggregatorFakes({ chains: fakeChains, host });
      stopFakes = () => fakes.stop();
      aggregators = { ...fakes.local, chainIds: Object.keys(fakeChains).map(Number) };
      log(
        `devnet aggregator fakes: 0x at ${fakes.local.zeroExBaseUrl}, KyberSwap at ${fakes.local.kyberswapBaseUrl}`,
      );
    }

    // Circle's attestation service, when both ends of the CCTP corridor run.
    const irisChains: Record<number, IrisFakeChain> = {};
    for (const c of Object.values(chains)) {
      const domain = DEVNET_CCTP_DOMAINS[c.chainId];
      const { cctpMessageTransmitter, cctpTokenMessenger } = c.contracts;
      if (domain === undefined || !cctpMessageTransmitter || !cctpTokenMessenger) continue;
      irisChains[c.chainId] = {
        rpcUrl: c.rpcUrl,
        domain,
        messageTransmitter: cctpMessageTransmitter,
        tokenMessenger: cctpTokenMessenger,
      };
    }
    if (Object.keys(DEVNET_CCTP_DOMAINS).every((id) => irisChains[Number(id)])) {
      const iris = await startIrisFake({
        chains: irisChains,
        attesterPrivateKey: DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
        host,
      });
      stopIris = () => iris.stop();
      attestation = {
        irisBaseUrl: iris.url,
        attester: iris.attester,
        domains: Object.fromEntries(Object.entries(irisChains).map(([id, c]) => [Number(id), c.domain])),
      };
      log(`devnet Iris fake (CCTP attestations) at ${iris.url}`);
    }

    // Polymarket's CLOB, when Polygon runs.
    const polygon = chains[POLYGON_CHAIN_ID];
    if (polygon) {
      const clob = await startClobFake({
        chainId: POLYGON_CHAIN_ID,
        markets: DEVNET_POLYMARKET_MARKETS,
        chain: {
          rpcUrl: polygon.rpcUrl,
          ...(polygon.contracts.pusd ? { collateral: polygon.contracts.pusd } : {}),
        },
        ...(stateDir ? { persistPath: join(resolve(stateDir), 'polymarket-clob-api-keys.json') } : {}),
        host,
      });
      stopClob = () => clob.stop();
      const polymarketContracts = devnetPolymarketContracts(polygon.contracts);
      polygon.polymarket = {
        clobUrl: clob.url,
        markets: structuredClone(DEVNET_POLYMARKET_MARKETS),
        ...(polymarketContracts ? { contracts: polymarketContracts } : {}),
      };
      log(`devnet Polymarket CLOB fake at ${clob.url}`);

      // The Safe Transaction Service's owner look-ups, for the Safes of the devnet's factory.
      if (polygon.contracts.safeProxyFactory) {
        const txService = await startSafeTxServiceFake({
          chainId: POLYGON_CHAIN_ID,
          rpcUrl: polygon.rpcUrl,
          proxyFactories: [polygon.contracts.safeProxyFactory],
          host,
        });
        stopSafeTxService = () => txService.stop();
        polygon.safeTxServiceUrl = txService.url;
        log(`devnet Safe Transaction Service fake at ${txService.url}`);
      }
    }

    // Kalshi's trade API, for checking Kalshi credentials, with a development key it accepts.
    const kalshiKey = devnetKalshiKey(stateDir);
    const kalshiFake = await startKalshiFake({
      keys: [{ keyId: kalshiKey.keyId, publicKeyPem: kalshiKey.publicKeyPem }],
      host,
    });
    stopKalshi = () => kalshiFake.stop();
    const kalshi = {
      apiUrl: kalshiFake.baseUrl,
      keyId: kalshiKey.keyId,
      privateKeyPem: kalshiKey.privateKeyPem,
    };
    log(
      `devnet Kalshi fake at ${kalshiFake.baseUrl} (development API key ${kalshiKey.keyId}` +
        `${stateDir ? `, private key in ${join(resolve(stateDir), KALSHI_DEV_KEY_FILE)}` : ''})`,
    );

    let stopped: Promise<void> | null = null;
    const info = (): DevnetInfo =>
      structuredClone({
        chains,
        ...(aggregators ? { aggregators } : {}),
        ...(attestation ? { attestation } : {}),
        kalshi,
      });
    return {
      chains,
      ...(aggregators ? { aggregators } : {}),
      ...(attestation ? { attestation } : {}),
      kalshi,
      info,
      stop: () => {
        stopped ??= stopAll().then(() => log('devnet stopped'));
        return stopped;
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Chain id → RPC URL, for the chain port's configuration. */
export function devnetRpcUrls(devnet: DevnetInfo): Record<number, string> {
  const out: Record<number, string> = {};
  for (const chain of Object.values(devnet.chains)) out[chain.chainId] = chain.rpcUrl;
  return out;
}

/** Chain id → the devnet bundler's URL, for chains that have one (the bundler port's configuration). */
export function devnetBundlerUrls(devnet: DevnetInfo): Record<number, string> {
  const out: Record<number, string> = {};
  for (const chain of Object.values(devnet.chains))
    if (chain.bundlerUrl) out[chain.chainId] = chain.bundlerUrl;
  return out;
}

/** Chain id → token symbol → address, for the token registry. */
export function devnetTokenAddresses(devnet: DevnetInfo): Record<number, Record<string, Address>> {
  const out: Record<number, Record<string, Address>> = {};
  for (const chain of Object.values(devnet.chains)) {
    out[chain.chainId] = Object.fromEntries(chain.tokens.map((t) => [t.symbol, t.address]));
  }
  return out;
}

/** The devnet chain `chainId`, or an error naming the chains there are. */
export function devnetChain(devnet: DevnetInfo, chainId: number): DevnetChain {
  const chain = devnet.chains[chainId];
  if (!chain) {
    throw new Error(`Devnet has no chain ${chainId} (has ${Object.keys(devnet.chains).join(', ')})`);
  }
  return chain;
}

/** A token of a devnet chain by symbol (case-insensitive). */
export function devnetToken(devnet: DevnetInfo, chainId: number, symbol: string): DevnetToken {
  const chain = devnetChain(devnet, chainId);
  const token = chain.tokens.find((t) => t.symbol.toLowerCase() === symbol.toLowerCase());
  if (!token) {
    throw new Error(
      `Devnet chain ${chainId} has no token ${symbol} (has ${chain.tokens.map((t) => t.symbol).join(', ')})`,
    );
  }
  return token;
}
