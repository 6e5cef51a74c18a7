// The devnet: one anvil per chain id, with Purser's test contracts deployed at the same
// addresses on every run (anvil's default account #0 deploys them from nonce 0, in a fixed order).
//
// Development and tests only. The anvil processes are children of this process: stop() ends them,
// and so does this process's exit (and SIGINT/SIGTERM when nothing else handles those).

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getContractAddress,
  hexToBigInt,
  http,
  encodeFunctionData,
  isHex,
  keccak256,
  pad,
  parseAbi,
  parseEther,
  parseUnits,
  toHex,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TestClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { artifact, DEVNET_DIR, loadArtifacts, type Artifacts } from '../../devnet/compile.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { busyPorts } from '../core/ports.ts';
import { isAlive } from '../core/process.ts';
import { startDevnetBundler, type DevnetBundler } from './bundler.ts';
import { startAggregatorFakes, type FakeChain } from './fakes/index.ts';
import { startClobFake, type ClobFakeMarket } from './fakes/clob.ts';
import { startKalshiFake } from './fakes/kalshi.ts';
import { startIrisFake, type IrisFakeChain } from './fakes/iris.ts';
import { startSafeTxServiceFake } from './fakes/safe-tx-service.ts';
import { CTF_EXCHANGE_V2 } from '../adapters/pm-venue/polymarket.ts';
import { seedDevnetMarkets, type DevnetPool } from './markets.ts';

export type { DevnetPool } from './markets.ts';

/** anvil's default account #0 (from the public "test … junk" mnemonic): the devnet deployer. */
export const DEVNET_DEPLOYER_PRIVATE_KEY: Hex =
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const DEVNET_DEPLOYER: Address = privateKeyToAccount(DEVNET_DEPLOYER_PRIVATE_KEY).address;

/**
 * anvil's default account #5: submits the devnet bundler's `handleOps` transactions and is their
 * beneficiary (no other devnet role uses it; Alto in tests runs on #6 and #7).
 */
export const DEVNET_BUNDLER_PRIVATE_KEY: Hex =
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
/** What the bundler key is topped up to at start when it holds less than half of it. */
const DEVNET_BUNDLER_BALANCE = parseEther('10000');

/** Canonical ERC-4337 EntryPoint v0.7 (same address on every chain, devnet included). */
export const ENTRY_POINT_V07: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
/** Arachnid's deterministic CREATE2 deployer, which anvil pre-installs. */
export const CREATE2_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
/** Salt that puts @account-abstraction/contracts@0.7.0's EntryPoint at ENTRY_POINT_V07. */
const ENTRY_POINT_V07_SALT: Hex = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3';

/** The CCTP domain of each devnet chain with Circle's CCTP V2 contracts (Circle's domain ids). */
export const DEVNET_CCTP_DOMAINS: Record<number, number> = { 8453: 6, 137: 7 };
/**
 * anvil's default account #8: the devnet's CCTP attester. The transmitters accept its signatures
 * and the Iris fake signs with it (no other devnet role uses it).
 */
export const DEVNET_CCTP_ATTESTER_PRIVATE_KEY: Hex =
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97';
export const DEVNET_CCTP_ATTESTER: Address = privateKeyToAccount(DEVNET_CCTP_ATTESTER_PRIVATE_KEY).address;

/**
 * The admin of the devnet's collateral ramps (Polygon): it alone may `pause(asset)` /
 * `unpause(asset)` them. Not the deployer, whose nonces the deploy plan counts. Holds no ether
 * until a test gives it some. Not a secret: a development key.
 */
export const DEVNET_RAMP_ADMIN_PRIVATE_KEY: Hex = keccak256(toHex('purser devnet collateral ramp admin'));
export const DEVNET_RAMP_ADMIN: Address = privateKeyToAccount(DEVNET_RAMP_ADMIN_PRIVATE_KEY).address;

/**
 * The markets the devnet's Polymarket CLOB fake lists (made-up ids, fixed across runs): a binary
 * market on the 0.01 grid and a neg-risk one on the 0.001 grid (its orders are signed for the
 * neg-risk exchange). Their token ids are made up, not position ids of the devnet's
 * ConditionalTokens, and the fake is not pointed at that contract: outcome-token balances come
 * from the fake's in-memory table.
 */
export const DEVNET_POLYMARKET_MARKETS: ClobFakeMarket[] = [
  devnetMarket('Will the devnet answer?', '0.01', false),
  devnetMarket('Which devnet chain settles first: Polygon?', '0.001', true),
];

function devnetMarket(
  question: string,
  tickSize: ClobFakeMarket['tickSize'],
  negRisk: boolean,
): ClobFakeMarket {
  const conditionId = keccak256(toHex(`purser devnet polymarket: ${question}`));
  const token = (outcome: string) => ({
    tokenId: hexToBigInt(keccak256(concat([conditionId, toHex(outcome)]))).toString(),
    outcome,
  });
  return { conditionId, question, tickSize, negRisk, minOrderSize: 5, tokens: [token('Yes'), token('No')] };
}

/** EIP-712 token name of USDC per chain (the real tokens differ: Base Sepolia says "USDC"). */
const USDC_EIP712_NAME: Record<number, string> = { 84532: 'USDC', 8453: 'USD Coin', 137: 'USD Coin' };
export const POLYGON_CHAIN_ID = 137;
export const BASE_CHAIN_ID = 8453;
export const BASE_SEPOLIA_CHAIN_ID = 84532;

/**
 * Where the real chains keep the tokens the devnet stands in for (Circle's USDC and EURC, the OP
 * Stack's WETH9 predeploy, Polygon's bridged USDC.e and Polymarket's pUSD; the protocol
 * reference cites each). The devnet places its tokens there, so tools that know these addresses
 * (the official x402 client's default assets, Polymarket's client) see the devnet's tokens.
 */
export const DEVNET_CANONICAL_TOKENS: Record<number, Partial<Record<DeployedKey, Address>>> = {
  [BASE_CHAIN_ID]: {
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    weth: '0x4200000000000000000000000000000000000006',
    eurc: '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42',
  },
  [BASE_SEPOLIA_CHAIN_ID]: {
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    weth: '0x4200000000000000000000000000000000000006',
  },
  [POLYGON_CHAIN_ID]: {
    usdc: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
    usdce: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
    pusd: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB',
  },
};

/**
 * Storage slots a relocated token carries from where it was deployed (its constructor writes
 * only the first few: name, symbol). Long strings (over 31 bytes) would live elsewhere: none of
 * the devnet's tokens has one.
 */
const RELOCATED_SLOTS = 8;

/**
 * A devnet state saved by a version that kept its tokens at their deployment addresses: the
 * contracts around them (pools, bridges, ramps) and the ledger name those addresses, so the
 * state cannot be moved; the devnet and its database are reset together.
 */
export class DevnetOutdatedStateError extends Error {
  constructor(
    readonly chainId: number,
    symbol: string,
    at: Address,
    canonical: Address,
  ) {
    super(
      `Chain ${chainId}: the saved devnet state keeps ${symbol} at its deployment address ${at}; ` +
        `this version places it at the real chain's address ${canonical}, and contracts and balances ` +
        'saved with the old address cannot follow it.',
    );
    this.name = 'DevnetOutdatedStateError';
  }
}

export interface DevnetToken {
  symbol: string;
  name: string;
  decimals: number;
  address: Address;
  /** EIP-712 domain name/version for EIP-3009 authorizations, or null for tokens without them. */
  eip3009: { name: string; version: string } | null;
}

export interface DevnetContracts {
  usdc: Address;
  weth: Address;
  accountFactory: Address;
  /** Polygon (137) only: bridged USDC look-alike "USD Coin (PoS)". */
  usdce?: Address;
  /** Polygon (137) only: Polymarket pUSD look-alike (6 decimals, no EIP-3009). */
  pusd?: Address;
  /** ERC-4337 EntryPoint v0.7 at its canonical address (unless disabled or not installed). */
  entryPoint?: Address;
  /** Base (8453) only: Circle's euro stablecoin look-alike (6 decimals, EIP-3009). */
  eurc?: Address;
  /** Price feeds with Chainlink's interface (DevPriceFeed): Base and Base Sepolia. */
  feedEthUsd?: Address;
  feedUsdcUsd?: Address;
  /** Base (8453) only. */
  feedEurcUsd?: Address;
  /** Base (8453) only, the `devnet-amm` venue: Uniswap v2 from its npm build artifacts. */
  uniswapV2Factory?: Address;
  uniswapV2Router02?: Address;
  /** Base (8453) only, the `uniswap-v3` venue: Uniswap v3 core and periphery from their npm build artifacts. */
  uniswapV3Factory?: Address;
  uniswapV3QuoterV2?: Address;
  /** v3-periphery's SwapRouter (v1), which the SwapRouter02-format router below calls. */
  uniswapV3SwapRouter?: Address;
  uniswapV3PositionManager?: Address;
  /** DevSwapRouter02: SwapRouter02's call formats in front of the SwapRouter (what the adapter calls). */
  uniswapV3SwapRouter02?: Address;
  /** Base (8453) only, the `aerodrome` venue: a v2 factory for its pools and DevAerodromeRouter. */
  aerodromePoolFactory?: Address;
  aerodromeRouter?: Address;
  /**
   * Base and Base Sepolia: ZeroDev Kernel v3.1 as published (devnet/vendor/kernel-v3.1.json), the
   * implementation (bound to EntryPoint v0.7) and its KernelFactory (`createAccount(bytes data,
   * bytes32 salt)`, `getAddress(bytes data, bytes32 salt)`). At devnet addresses, not ZeroDev's
   * canonical ones: point the SDK at them with `factoryAddress`, `accountImplementationAddress`
   * and `useMetaFactory: false`.
   */
  kernelImplementation?: Address;
  kernelFactory?: Address;
  /**
   * Base and Base Sepolia: the devnet's own ECDSA validator module for Kernel
   * (devnet/KernelECDSAValidator.sol), with the interface of ZeroDev's ECDSAValidator
   * (`ecdsaValidatorStorage(address) returns (address owner)`, `onInstall(bytes owner20)`,
   * `validateUserOp`, `isValidSignatureWithSender`, …). Root validator of devnet Kernel accounts:
   * pass it to the SDK as the validator address in place of ZeroDev's canonical module.
   */
  kernelEcdsaValidator?: Address;
  /**
   * Base and Base Sepolia: the devnet's own session-key modules for Kernel permissions, with the
   * interfaces of ZeroDev's (`onInstall(bytes32 permissionId ‖ data)` from the account; signer:
   * `checkUserOpSignature(bytes32 id, PackedUserOperation, bytes32 userOpHash) returns (uint256)`,
   * `checkSignature(bytes32 id, address, bytes32, bytes) returns (bytes4)`; policies:
   * `checkUserOpPolicy(bytes32 id, PackedUserOperation) returns (uint256)`,
   * `checkSignaturePolicy(bytes32 id, address, bytes32, bytes) returns (uint256)`). They decode
   * what src/modules/delegations/kernel.ts emits; pass them as the delegations' module addresses
   * (and to the SDK as `signerContractAddress` / `policyAddress`) in place of ZeroDev's.
   * ECDSA signer (module type 6, devnet/KernelECDSASigner.sol): data = the session key's address.
   */
  kernelEcdsaSigner?: Address;
  /** Call policy (type 5, devnet/KernelCallPolicy.sol): data = `abi.encode(Permission[])`, with parameter rules. */
  kernelCallPolicy?: Address;
  /** Timestamp policy (type 5, devnet/KernelTimestampPolicy.sol): data = `abi.encode(uint48 validAfter, uint48 validUntil)`. */
  kernelTimestampPolicy?: Address;
  /** Rate-limit policy (type 5, devnet/KernelRateLimitPolicy.sol): data = `uint48 interval ‖ uint48 count ‖ uint48 startAt`. */
  kernelRateLimitPolicy?: Address;
  /**
   * Base (8453, CCTP domain 6) and Polygon (137, domain 7): the devnet's own Circle CCTP V2
   * contracts, with Circle's public interfaces and message formats (docs/operations.md). The
   * MessageTransmitterV2 (devnet/DevMessageTransmitterV2.sol): `receiveMessage(bytes message,
   * bytes attestation)`, accepting the signatures of DEVNET_CCTP_ATTESTER; `MessageSent(bytes)`.
   */
  cctpMessageTransmitter?: Address;
  /**
   * The TokenMessengerV2 (devnet/DevTokenMessengerV2.sol), TokenMinter merged in:
   * `depositForBurn(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee,
   * minFinalityThreshold)` burns the chain's USDC (approve it to this address first) for the other
   * chain's; fees go to the deployer.
   */
  cctpTokenMessenger?: Address;
  /**
   * Polygon (137) only: Safe v1.5.0 from the npm build artifacts of
   * @safe-global/safe-smart-account (`build/artifacts/contracts/…`), at devnet addresses (not
   * Safe's canonical ones): the Safe singleton, the SafeL2 singleton (what Polygon Safes use),
   * the SafeProxyFactory (`createProxyWithNonce(singleton, initializer, saltNonce)`, event
   * `ProxyCreation(proxy, singleton)`), the CompatibilityFallbackHandler (ERC-1155/721 receiver,
   * ERC-1271), MultiSend and MultiSendCallOnly (batches by DELEGATECALL). src/devnet/safes.ts
   * makes Safes with them.
   */
  safeSingleton?: Address;
  safeL2Singleton?: Address;
  safeProxyFactory?: Address;
  safeFallbackHandler?: Address;
  safeMultiSend?: Address;
  safeMultiSendCallOnly?: Address;
  /**
   * Polygon (137) only: Gnosis' ConditionalTokens (the CTF, ERC-1155: `setApprovalForAll`,
   * `isApprovedForAll`, `balanceOf`, `balanceOfBatch`, `safeTransferFrom`, and
   * `prepareCondition` / `splitPosition` / `mergePositions` / `redeemPositions`) from the npm
   * build artifact of @gnosis.pm/conditional-tokens-contracts 1.0.3 — the contract Polymarket
   * uses. Outcome shares are minted the real way: `prepareCondition`, then `splitPosition` with
   * pUSD as the collateral.
   */
  conditionalTokens?: Address;
  /**
   * Polygon (137) only: the devnet's own collateral ramps with the public interface of
   * Polymarket's CollateralOnramp / CollateralOfframp (devnet/DevCollateralRamps.sol):
   * `wrap(address _asset, address _to, uint256 _amount)` (0x62355638) takes USDC.e or USDC (approve
   * the onramp) and gives pUSD; `unwrap(…)` (0x8cc7104f) takes pUSD (approve the offramp) and gives
   * the asset back from the onramp's reserve; per-asset `pause` / `unpause` by DEVNET_RAMP_ADMIN.
   */
  collateralOnramp?: Address;
  collateralOfframp?: Address;
}

/**
 * Polygon (137): what a Polymarket venue account needs on chain, in one object. `collateral` is
 * pUSD; `exchange`, `negRiskExchange` and `negRiskAdapter` are Polymarket's real V2 addresses (the
 * spenders and operators of the six grants; the CLOB fake verifies orders signed for the two
 * exchanges). No code is deployed at those three on the devnet: approvals to them work all the
 * same, but nothing settles there.
 */
export interface DevnetPolymarketContracts {
  collateral: Address;
  usdce: Address;
  onramp: Address;
  offramp: Address;
  conditionalTokens: Address;
  exchange: Address;
  negRiskExchange: Address;
  negRiskAdapter: Address;
}

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

export type DevnetLog = ((message: string) => void) | { info(message: string): void };

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

/** A devnet port another program holds; the message names the port and the setting to change. */
export class DevnetPortInUseError extends Error {
  constructor(
    readonly ports: { port: number; chainId: number }[],
    readonly host: string,
  ) {
    const list = ports.map((p) => `${p.port} (chain ${p.chainId})`).join(', ');
    super(
      `Devnet port${ports.length > 1 ? 's' : ''} ${list} on ${host} ${ports.length > 1 ? 'are' : 'is'} already in use. ` +
        'Set DEVNET_BASE_PORT to another port (chain i of DEVNET_CHAINS listens on DEVNET_BASE_PORT + i), ' +
        'or DEVNET_BASE_PORT=0 to pick free ports, or stop the program holding the port ' +
        '(an earlier Purser or anvil still running?).',
    );
    this.name = 'DevnetPortInUseError';
  }
}

// ------------------------------------------------------------------------------ process control

const liveChildren = new Set<ChildProcess>();
/** Children that keep a state file: ended with SIGTERM, so they write it (SIGKILL would lose it). */
const statefulChildren = new WeakSet<ChildProcess>();
let exitHooksInstalled = false;

function killAllNow(): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(statefulChildren.has(child) ? 'SIGTERM' : 'SIGKILL');
    }
  }
  liveChildren.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // Only when nobody else decides what the signal means: then die as the default would. A
    // listener added later (the service's shutdown) owns the signal, and stops the devnet itself.
    if (process.listenerCount(signal) > 0) continue;
    const onSignal = (): void => {
      if (process.listenerCount(signal) > 0) return;
      killAllNow();
      process.kill(process.pid, signal);
    };
    process.once(signal, onSignal);
  }
}

/** Path of the anvil binary shipped by the @foundry-rs/anvil-<platform>-<arch> npm package. */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  let pkgJson: string;
  try {
    pkgJson = require.resolve(`${pkg}/package.json`);
  } catch (cause) {
    throw new Error(`anvil is not installed for this platform (npm package ${pkg})`, { cause });
  }
  return join(dirname(pkgJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

/** Distinct free TCP ports on `host` (held open together, so they differ from each other). */
async function freePorts(count: number, host: string): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, host, () => {
            const addr = server.address();
            if (addr && typeof addr === 'object') resolve(addr.port);
            else reject(new Error('no port'));
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** Where chain `chainId` keeps its state when the devnet has a state directory. */
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

export function devnetStateFile(stateDir: string, chainId: number): string {
  return join(resolve(stateDir), `chain-${chainId}.json`);
}

function pidFile(stateDir: string, chainId: number): string {
  return join(resolve(stateDir), `chain-${chainId}.pid`);
}

/**
 * Anvils an earlier run left behind (its process was killed without a chance to stop them) still
 * hold the latest chain state and their ports. Each one found — by the pid file of its chain, and
 * only if that process is an anvil on this chain's state file — is stopped with SIGTERM, which
 * makes it write its state file. Returns the chain ids whose leftover anvil wrote its state so.
 * Only where /proc shows command lines (Linux); elsewhere nothing is found.
 */
export async function reclaimLeftoverAnvils(
  stateDir: string,
  chainIds: number[],
  log?: DevnetLog,
): Promise<number[]> {
  const say = logger(log);
  const reclaimed: number[] = [];
  for (const chainId of chainIds) {
    const path = pidFile(stateDir, chainId);
    if (!existsSync(path)) continue;
    const pid = Number(readFileSync(path, 'utf8').trim());
    rmSync(path, { force: true });
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    if (!cmdline.includes('anvil') || !cmdline.includes(devnetStateFile(stateDir, chainId))) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = performance.now() + 15_000;
    while (isAlive(pid) && performance.now() < deadline) await sleep(50);
    if (isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      continue;
    }
    say(
      `devnet chain ${chainId}: stopped the anvil an earlier run left running (pid ${pid}); it saved its state`,
    );
    reclaimed.push(chainId);
  }
  return reclaimed;
}

interface RunningAnvil {
  chainId: number;
  port: number;
  rpcUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function rpcChainId(rpcUrl: string): Promise<number | null> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string' ? Number(BigInt(body.result)) : null;
  } catch {
    return null;
  }
}

async function spawnAnvil(
  chainId: number,
  port: number,
  host: string,
  binary: string,
  extraArgs: string[],
  timeoutMs: number,
  stateDir?: string,
): Promise<RunningAnvil> {
  const stateArgs = stateDir ? ['--state', devnetStateFile(stateDir, chainId)] : [];
  const args = [
    '--chain-id',
    String(chainId),
    '--port',
    String(port),
    '--host',
    host,
    '--silent',
    '--disable-code-size-limit',
    ...stateArgs,
    ...extraArgs,
  ];
  const child = spawn(binary, args, { detached: false, stdio: ['ignore', 'ignore', 'pipe'] });
  liveChildren.add(child);
  if (stateDir) statefulChildren.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  let spawnError: Error | null = null;
  child.once('error', (err) => {
    spawnError = err;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => liveChildren.delete(child));
  if (stateDir && child.pid !== undefined) {
    // Lets the next start find this anvil if this process dies without stopping it.
    writeFileSync(pidFile(stateDir, chainId), String(child.pid));
    void exited.then(() => rmSync(pidFile(stateDir, chainId), { force: true }));
  }

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    // With a state file, anvil writes the chain's state before it exits: give it the time.
    const graceMs = stateDir ? 15_000 : 3_000;
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  const rpcUrl = `http://${host}:${port}`;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (spawnError) throw new Error(`Could not start anvil (${binary}): ${(spawnError as Error).message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      // Lost a race for the port with another program after the check in startDevnet.
      if (/address already in use/i.test(stderr)) throw new DevnetPortInUseError([{ port, chainId }], host);
      throw new Error(
        `anvil for chain ${chainId} on port ${port} exited (${child.exitCode ?? child.signalCode}): ${stderr.trim()}`,
      );
    }
    const answered = await rpcChainId(rpcUrl);
    if (answered !== null) {
      if (answered !== chainId) {
        await stop();
        throw new Error(
          `Port ${port} answers as chain ${answered}, expected ${chainId} (another node there?)`,
        );
      }
      return { chainId, port, rpcUrl, child, stop };
    }
    if (performance.now() > deadline) {
      await stop();
      throw new Error(
        `anvil for chain ${chainId} did not answer on ${rpcUrl} within ${timeoutMs} ms: ${stderr.trim()}`,
      );
    }
    await sleep(25);
  }
}

// ------------------------------------------------------------------------------ deployment

type DeployedKey = Exclude<keyof DevnetContracts, 'entryPoint'>;

/** A call the deployer makes between deployments (it takes a nonce of its own). */
interface DeployerCall {
  call: string;
  to: (deployed: Partial<Record<DeployedKey, Address>>) => Address;
  data: Hex;
  /** Whether the call's effect is in place (checked on a chain loaded from its saved state). */
  done: (
    client: ReturnType<typeof createPublicClient>,
    deployed: Partial<Record<DeployedKey, Address>>,
  ) => Promise<boolean>;
}

type PlanStep = Deployment | DeployerCall;

interface Deployment {
  call?: undefined;
  key: DeployedKey;
  /**
   * A contract compiled from devnet/*.sol, or the one `npmArtifact` or `vendorArtifact` names
   * (then only a label for messages).
   */
  contract: string;
  /** Module path of a JSON build artifact (`abi` and `bytecode`) in an npm package. */
  npmArtifact?: string;
  /** Published creation code kept in devnet/vendor/ (for contracts no installable package ships). */
  vendorArtifact?: VendorArtifact;
  /** Constructor arguments; a function gets the addresses of the deployments before it. */
  args: readonly unknown[] | ((deployed: Partial<Record<DeployedKey, Address>>) => readonly unknown[]);
  token?: Omit<DevnetToken, 'address'>;
  /** A price feed: the pair it prices (`ETH/USD`). */
  feed?: string;
  /**
   * On a chain restored from its saved state, replace this contract's runtime code with the
   * current build (anvil_setCode) when they differ, keeping its storage: how a contract restored
   * from an earlier version gains new functions. Only for a contract compiled from devnet/*.sol
   * that has no immutables and whose storage layout stays as it was (TestUSDC).
   */
  upgradeInPlace?: boolean;
}

/** Where a deployment lives: its real chain's address when it has one, else where it was deployed. */
function placedAt(chainId: number, d: Deployment, deployedAt: Address): Address {
  return DEVNET_CANONICAL_TOKENS[chainId]?.[d.key] ?? deployedAt;
}

/**
 * A field of a JSON file in devnet/vendor/ holding creation code as hex, and the constructor's
 * signature (`constructor(address entrypoint)`), which the file names in a field of its own.
 */
interface VendorArtifact {
  file: string;
  creationCodeField: string;
  constructorField: string;
}

const KERNEL_V3_1_FILE = 'kernel-v3.1.json';

/** Feed decimals and the answers the devnet starts with (USD per unit, 8 decimals as on Base). */
export const DEVNET_FEED_DECIMALS = 8;
export const DEVNET_START_PRICES_USD: Record<string, string> = {
  'ETH/USD': '3000',
  'USDC/USD': '1',
  'EURC/USD': '1.08',
};

function feedDeployment(key: DeployedKey, pair: string): Deployment {
  const usd = DEVNET_START_PRICES_USD[pair];
  if (!usd) throw new Error(`No start price for ${pair}`);
  return {
    key,
    contract: 'DevPriceFeed',
    args: [DEVNET_FEED_DECIMALS, pair, parseUnits(usd, DEVNET_FEED_DECIMALS)],
    feed: pair,
  };
}

const v3FactoryAbi = parseAbi([
  'function enableFeeAmount(uint24 fee, int24 tickSpacing)',
  'function feeAmountTickSpacing(uint24 fee) view returns (int24)',
]);

const need = (deployed: Partial<Record<DeployedKey, Address>>, key: DeployedKey): Address => {
  const address = deployed[key];
  if (!address) throw new Error(`devnet deployment order: ${key} is needed before it is deployed`);
  return address;
};

/** What goes on a chain, in deploy order (the order fixes the addresses: keep it append-only). */
export function deploymentPlan(chainId: number): PlanStep[] {
  const usdcName = USDC_EIP712_NAME[chainId] ?? 'USD Coin';
  const plan: PlanStep[] = [
    {
      key: 'usdc',
      contract: 'TestUSDC',
      args: [usdcName, 'USDC'],
      upgradeInPlace: true,
      token: { symbol: 'USDC', name: usdcName, decimals: 6, eip3009: { name: usdcName, version: '2' } },
    },
    {
      key: 'weth',
      contract: 'WETH9',
      args: [],
      token: { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, eip3009: null },
    },
    { key: 'accountFactory', contract: 'DevAccountFactory', args: [] },
  ];
  // Append-only from here on: every entry takes the deployer's next nonce, so an address, once
  // deployed, stays where it is on every later run and on a chain loaded from its saved state.
  if (chainId === BASE_CHAIN_ID) {
    plan.push(
      {
        key: 'eurc',
        contract: 'TestUSDC',
        args: ['EURC', 'EURC'],
        upgradeInPlace: true,
        token: { symbol: 'EURC', name: 'EURC', decimals: 6, eip3009: { name: 'EURC', version: '2' } },
      },
      feedDeployment('feedEthUsd', 'ETH/USD'),
      feedDeployment('feedUsdcUsd', 'USDC/USD'),
      feedDeployment('feedEurcUsd', 'EURC/USD'),
      {
        key: 'uniswapV2Factory',
        contract: 'UniswapV2Factory',
        npmArtifact: '@uniswap/v2-core/build/UniswapV2Factory.json',
        args: [DEVNET_DEPLOYER],
      },
      {
        key: 'uniswapV2Router02',
        contract: 'UniswapV2Router02',
        npmArtifact: '@uniswap/v2-periphery/build/UniswapV2Router02.json',
        args: (d) => [need(d, 'uniswapV2Factory'), need(d, 'weth')],
      },
      {
        key: 'uniswapV3Factory',
        contract: 'UniswapV3Factory',
        npmArtifact: '@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json',
        args: [],
      },
      {
        // Base has the 0.01% tier (enabled by governance after launch); the factory's constructor
        // enables only 0.05%, 0.30% and 1%.
        call: 'enable the 0.01% fee tier',
        to: (d) => need(d, 'uniswapV3Factory'),
        data: encodeFunctionData({ abi: v3FactoryAbi, functionName: 'enableFeeAmount', args: [100, 1] }),
        done: async (client, d) =>
          (await client.readContract({
            address: need(d, 'uniswapV3Factory'),
            abi: v3FactoryAbi,
            functionName: 'feeAmountTickSpacing',
            args: [100],
          })) === 1,
      },
      {
        key: 'uniswapV3QuoterV2',
        contract: 'QuoterV2',
        npmArtifact: '@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json',
        args: (d) => [need(d, 'uniswapV3Factory'), need(d, 'weth')],
      },
      {
        key: 'uniswapV3SwapRouter',
        contract: 'SwapRouter',
        npmArtifact: '@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json',
        args: (d) => [need(d, 'uniswapV3Factory'), need(d, 'weth')],
      },
      {
        key: 'uniswapV3PositionManager',
        contract: 'NonfungiblePositionManager',
        npmArtifact:
          '@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json',
        // The token descriptor only renders tokenURI; the devnet has none.
        args: (d) => [need(d, 'uniswapV3Factory'), need(d, 'weth'), zeroAddress],
      },
      {
        key: 'uniswapV3SwapRouter02',
        contract: 'DevSwapRouter02',
        args: (d) => [need(d, 'uniswapV3SwapRouter')],
      },
      {
        key: 'aerodromePoolFactory',
        contract: 'UniswapV2Factory',
        npmArtifact: '@uniswap/v2-core/build/UniswapV2Factory.json',
        args: [DEVNET_DEPLOYER],
      },
      {
        key: 'aerodromeRouter',
        contract: 'DevAerodromeRouter',
        args: (d) => [need(d, 'aerodromePoolFactory')],
      },
    );
  }
  if (chainId === BASE_SEPOLIA_CHAIN_ID) {
    plan.push(feedDeployment('feedEthUsd', 'ETH/USD'), feedDeployment('feedUsdcUsd', 'USDC/USD'));
  }
  if (chainId === POLYGON_CHAIN_ID) {
    plan.push(
      {
        key: 'usdce',
        contract: 'TestUSDC',
        args: ['USD Coin (PoS)', 'USDC.e'],
        upgradeInPlace: true,
        token: {
          symbol: 'USDC.e',
          name: 'USD Coin (PoS)',
          decimals: 6,
          eip3009: { name: 'USD Coin (PoS)', version: '2' },
        },
      },
      {
        key: 'pusd',
        contract: 'TestToken',
        args: ['Polymarket USD', 'pUSD', 6],
        token: { symbol: 'pUSD', name: 'Polymarket USD', decimals: 6, eip3009: null },
      },
    );
  }
  if (chainId === BASE_CHAIN_ID || chainId === BASE_SEPOLIA_CHAIN_ID) {
    // Kernel's constructor only records the EntryPoint's address, so the EntryPoint, deployed
    // after the plan, need not exist yet.
    plan.push(
      {
        key: 'kernelImplementation',
        contract: 'Kernel v3.1',
        vendorArtifact: {
          file: KERNEL_V3_1_FILE,
          creationCodeField: 'kernelCreationCode',
          constructorField: 'kernelConstructor',
        },
        args: [ENTRY_POINT_V07],
      },
      {
        key: 'kernelFactory',
        contract: 'KernelFactory v3.1',
        vendorArtifact: {
          file: KERNEL_V3_1_FILE,
          creationCodeField: 'kernelFactoryCreationCode',
          constructorField: 'kernelFactoryConstructor',
        },
        args: (d) => [need(d, 'kernelImplementation')],
      },
    );
  }
  if (chainId === BASE_CHAIN_ID || chainId === BASE_SEPOLIA_CHAIN_ID) {
    plan.push({ key: 'kernelEcdsaValidator', contract: 'KernelECDSAValidator', args: [] });
  }
  if (chainId === BASE_CHAIN_ID || chainId === BASE_SEPOLIA_CHAIN_ID) {
    plan.push(
      { key: 'kernelEcdsaSigner', contract: 'KernelECDSASigner', args: [] },
      { key: 'kernelCallPolicy', contract: 'KernelCallPolicy', args: [] },
      { key: 'kernelTimestampPolicy', contract: 'KernelTimestampPolicy', args: [] },
      { key: 'kernelRateLimitPolicy', contract: 'KernelRateLimitPolicy', args: [] },
    );
  }
  if (chainId === BASE_CHAIN_ID || chainId === POLYGON_CHAIN_ID) {
    plan.push(...cctpDeployments(chainId));
  }
  if (chainId === POLYGON_CHAIN_ID) {
    plan.push(...polymarketAccountDeployments());
  }
  return plan;
}

const SAFE_ARTIFACTS = '@safe-global/safe-smart-account/build/artifacts/contracts';

/**
 * Polygon: what a Polymarket venue account uses on chain besides USDC.e and pUSD. Safe v1.5.0
 * (singletons, proxy factory, fallback handler, MultiSend) and Gnosis' ConditionalTokens from
 * their npm build artifacts, and the devnet's own collateral ramps: the onramp keeps the reserve
 * and pays out only to the offramp, whose address (the next nonce) it is given.
 */
function polymarketAccountDeployments(): Deployment[] {
  const ramp = (d: Partial<Record<DeployedKey, Address>>) =>
    [DEVNET_RAMP_ADMIN, need(d, 'pusd'), need(d, 'usdc'), need(d, 'usdce')] as const;
  return [
    { key: 'safeSingleton', contract: 'Safe', npmArtifact: `${SAFE_ARTIFACTS}/Safe.sol/Safe.json`, args: [] },
    {
      key: 'safeL2Singleton',
      contract: 'SafeL2',
      npmArtifact: `${SAFE_ARTIFACTS}/SafeL2.sol/SafeL2.json`,
      args: [],
    },
    {
      key: 'safeProxyFactory',
      contract: 'SafeProxyFactory',
      npmArtifact: `${SAFE_ARTIFACTS}/proxies/SafeProxyFactory.sol/SafeProxyFactory.json`,
      args: [],
    },
    {
      key: 'safeFallbackHandler',
      contract: 'CompatibilityFallbackHandler',
      npmArtifact: `${SAFE_ARTIFACTS}/handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json`,
      args: [],
    },
    {
      key: 'safeMultiSend',
      contract: 'MultiSend',
      npmArtifact: `${SAFE_ARTIFACTS}/libraries/MultiSend.sol/MultiSend.json`,
      args: [],
    },
    {
      key: 'safeMultiSendCallOnly',
      contract: 'MultiSendCallOnly',
      npmArtifact: `${SAFE_ARTIFACTS}/libraries/MultiSendCallOnly.sol/MultiSendCallOnly.json`,
      args: [],
    },
    {
      key: 'conditionalTokens',
      contract: 'ConditionalTokens',
      npmArtifact: '@gnosis.pm/conditional-tokens-contracts/build/contracts/ConditionalTokens.json',
      args: [],
    },
    {
      key: 'collateralOnramp',
      contract: 'DevCollateralOnramp',
      args: (d) => {
        const offramp = expectedDevnetContracts(POLYGON_CHAIN_ID).collateralOfframp;
        if (!offramp) throw new Error('No collateral offramp in the plan of 137');
        return [...ramp(d), offramp];
      },
    },
    {
      key: 'collateralOfframp',
      contract: 'DevCollateralOfframp',
      args: (d) => [...ramp(d), need(d, 'collateralOnramp')],
    },
  ];
}

/** Chain 137's Polymarket contracts in one object, when its plan deployed them. */
export function devnetPolymarketContracts(contracts: DevnetContracts): DevnetPolymarketContracts | null {
  const { pusd, usdce, collateralOnramp, collateralOfframp, conditionalTokens } = contracts;
  const spenders = CTF_EXCHANGE_V2[POLYGON_CHAIN_ID];
  if (!pusd || !usdce || !collateralOnramp || !collateralOfframp || !conditionalTokens || !spenders)
    return null;
  return {
    collateral: pusd,
    usdce,
    onramp: collateralOnramp,
    offramp: collateralOfframp,
    conditionalTokens,
    exchange: spenders.exchange,
    negRiskExchange: spenders.negRiskExchange,
    negRiskAdapter: spenders.negRiskAdapter,
  };
}

/**
 * Circle CCTP V2 between Base and Polygon: the transmitter, then the messenger linked to the other
 * chain's messenger and USDC, at the addresses the other chain's plan gives them (the deployer's
 * nonces fix them, so no cross-chain call is needed).
 */
function cctpDeployments(chainId: number): Deployment[] {
  const remoteChainId = chainId === BASE_CHAIN_ID ? POLYGON_CHAIN_ID : BASE_CHAIN_ID;
  const domain = DEVNET_CCTP_DOMAINS[chainId];
  const remoteDomain = DEVNET_CCTP_DOMAINS[remoteChainId];
  if (domain === undefined || remoteDomain === undefined) throw new Error(`No CCTP domain for ${chainId}`);
  return [
    {
      key: 'cctpMessageTransmitter',
      contract: 'DevMessageTransmitterV2',
      args: [domain, DEVNET_CCTP_ATTESTER],
    },
    {
      key: 'cctpTokenMessenger',
      contract: 'DevTokenMessengerV2',
      args: (d) => {
        const remote = expectedDevnetContracts(remoteChainId);
        if (!remote.cctpTokenMessenger)
          throw new Error(`No CCTP token messenger in the plan of ${remoteChainId}`);
        return [
          need(d, 'cctpMessageTransmitter'),
          need(d, 'usdc'),
          remoteDomain,
          pad(remote.cctpTokenMessenger),
          pad(remote.usdc),
          DEVNET_DEPLOYER,
        ];
      },
    },
  ];
}

/** The addresses deploymentPlan(chainId) lands at on a fresh devnet. */
export function expectedDevnetContracts(chainId: number): DevnetContracts {
  const out: Partial<DevnetContracts> = {};
  deploymentPlan(chainId).forEach((d, nonce) => {
    if (d.call === undefined)
      out[d.key] = placedAt(chainId, d, getContractAddress({ from: DEVNET_DEPLOYER, nonce: BigInt(nonce) }));
  });
  return out as DevnetContracts;
}

/** Creation code and (constructor) ABI of a vendored artifact, read from devnet/vendor/. */
function vendorCreationCode(v: VendorArtifact): { abi: Abi; bytecode: Hex } {
  const path = join(DEVNET_DIR, 'vendor', v.file);
  const json = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const code = json[v.creationCodeField];
  const ctor = json[v.constructorField];
  if (typeof code !== 'string' || !isHex(code) || code.length <= 2 || typeof ctor !== 'string') {
    throw new Error(
      `${path}: no creation code in "${v.creationCodeField}" or constructor in "${v.constructorField}"`,
    );
  }
  return { abi: parseAbi([ctor]), bytecode: code };
}

/** Creation code and ABI of a deployment: compiled here, from an npm package's build artifact, or vendored. */
function creationCode(artifacts: Artifacts, d: Deployment): { abi: Abi; bytecode: Hex } {
  if (d.vendorArtifact) return vendorCreationCode(d.vendorArtifact);
  if (!d.npmArtifact) return artifact(artifacts, d.contract);
  const require = createRequire(import.meta.url);
  const json = require(d.npmArtifact) as { abi: Abi; bytecode: string };
  const hex = json.bytecode.startsWith('0x') ? json.bytecode : `0x${json.bytecode}`;
  return { abi: json.abi, bytecode: hex as Hex };
}

async function deployChain(
  anvil: RunningAnvil,
  artifacts: Artifacts,
  loadedState: boolean,
  log: (message: string) => void,
  planLength?: number,
): Promise<Pick<DevnetChain, 'contracts' | 'tokens' | 'priceFeeds'>> {
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const account = privateKeyToAccount(DEVNET_DEPLOYER_PRIVATE_KEY);
  const wallet = createWalletClient({ account, chain, transport });
  const testClient = createTestClient({ mode: 'anvil', chain, transport });

  const plan = deploymentPlan(anvil.chainId).slice(0, planLength);
  const startNonce = await publicClient.getTransactionCount({ address: account.address });
  if (startNonce !== 0 && !loadedState) {
    throw new Error(
      `Chain ${anvil.chainId}: deployer already has nonce ${startNonce}; devnet needs a fresh anvil`,
    );
  }
  if (startNonce > plan.length) {
    throw new Error(
      `Chain ${anvil.chainId}: the saved state has ${startNonce} deployments, more than this version's ` +
        `${plan.length}; it comes from a newer Purser. Delete the devnet state to start over.`,
    );
  }

  const contracts: Partial<Record<DeployedKey, Address>> = {};
  const tokens: DevnetToken[] = [];
  const priceFeeds: Record<string, Address> = {};
  for (const [nonce, d] of plan.entries()) {
    if (d.call !== undefined) {
      if (nonce < startNonce) {
        if (!(await d.done(publicClient, contracts))) {
          throw new Error(
            `Chain ${anvil.chainId}: the saved state lacks the deployer's call "${d.call}"; delete the devnet state to start over`,
          );
        }
        continue;
      }
      const hash = await wallet.sendTransaction({
        to: d.to(contracts),
        data: d.data,
        nonce,
        gas: 1_000_000n,
      });
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 20,
        timeout: 30_000,
      });
      if (receipt.status !== 'success') throw new Error(`Chain ${anvil.chainId}: "${d.call}" failed`);
      continue;
    }
    const deployedAt = getContractAddress({ from: account.address, nonce: BigInt(nonce) });
    const at = placedAt(anvil.chainId, d, deployedAt);
    if (nonce < startNonce) {
      // A chain loaded from its state file: what its earlier runs deployed is there.
      const onChain = await publicClient.getCode({ address: at });
      if ((onChain?.length ?? 0) <= 2) {
        if (at !== deployedAt && ((await publicClient.getCode({ address: deployedAt }))?.length ?? 0) > 2) {
          throw new DevnetOutdatedStateError(anvil.chainId, d.token?.symbol ?? d.contract, deployedAt, at);
        }
        throw new Error(
          `Chain ${anvil.chainId}: the saved state has no ${d.contract} at ${at}; delete the devnet state to start over`,
        );
      }
      if (d.upgradeInPlace) {
        const built = artifact(artifacts, d.contract).deployedBytecode;
        if (onChain?.toLowerCase() !== built.toLowerCase()) {
          await testClient.setCode({ address: at, bytecode: built });
          log(
            `devnet chain ${anvil.chainId}: ${d.contract} at ${at} had the code of an earlier version; ` +
              'replaced it with the current build (storage kept)',
          );
        }
      }
    } else {
      // Fresh, or a saved state from before this deployment was appended to the plan.
      const code = creationCode(artifacts, d);
      const hash = await wallet.deployContract({
        abi: code.abi,
        bytecode: code.bytecode,
        args: typeof d.args === 'function' ? d.args(contracts) : d.args,
        nonce,
        gas: 15_000_000n,
      });
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 20,
        timeout: 30_000,
      });
      if (
        receipt.status !== 'success' ||
        receipt.contractAddress?.toLowerCase() !== deployedAt.toLowerCase()
      ) {
        throw new Error(`Chain ${anvil.chainId}: deploying ${d.contract} failed (${receipt.status})`);
      }
      if (at !== deployedAt) await relocate(publicClient, testClient, deployedAt, at);
    }
    contracts[d.key] = at;
    if (d.token) tokens.push({ ...d.token, address: at });
    if (d.feed) priceFeeds[d.feed] = at;
  }
  return { contracts: contracts as DevnetContracts, tokens, priceFeeds };
}

/**
 * Moves a just-deployed contract to `to`: its runtime code (immutables included) and the first
 * storage slots its constructor wrote, then empties `from`, so one copy exists. Only for
 * contracts whose code does not depend on its own address (the devnet's tokens compute their
 * EIP-712 domain from `address(this)` at each call).
 */
async function relocate(
  publicClient: PublicClient,
  testClient: TestClient,
  from: Address,
  to: Address,
): Promise<void> {
  const code = await publicClient.getCode({ address: from });
  if (!code || code.length <= 2) throw new Error(`devnet: nothing to relocate at ${from}`);
  await testClient.setCode({ address: to, bytecode: code });
  for (let slot = 0; slot < RELOCATED_SLOTS; slot++) {
    const index = toHex(slot, { size: 32 });
    const value = await publicClient.getStorageAt({ address: from, slot: index });
    if (value && BigInt(value) !== 0n) {
      await testClient.setStorageAt({ address: to, index, value });
      await testClient.setStorageAt({ address: from, index, value: toHex(0, { size: 32 }) });
    }
  }
  await testClient.setCode({ address: from, bytecode: '0x' });
}

/** Creation code of EntryPoint v0.7, or null when @account-abstraction/contracts is not installed. */
function entryPointBytecode(): Hex | null {
  try {
    const require = createRequire(import.meta.url);
    const json = require('@account-abstraction/contracts/artifacts/EntryPoint.json') as { bytecode: Hex };
    return json.bytecode;
  } catch {
    return null;
  }
}

/** Deploys EntryPoint v0.7 through the CREATE2 deployer (from a throwaway key: the deployer's nonces stay untouched). */
async function deployEntryPoint(anvil: RunningAnvil, bytecode: Hex): Promise<Address> {
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const hasCode = async (address: Address) => ((await publicClient.getCode({ address }))?.length ?? 0) > 2;
  if (await hasCode(ENTRY_POINT_V07)) return ENTRY_POINT_V07;
  if (!(await hasCode(CREATE2_DEPLOYER))) {
    throw new Error(`Chain ${anvil.chainId}: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  }
  const sender = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', chain, transport }).setBalance({
    address: sender.address,
    value: parseEther('10'),
  });
  const wallet = createWalletClient({ account: sender, chain, transport });
  const hash = await wallet.sendTransaction({
    to: CREATE2_DEPLOYER,
    data: concat([ENTRY_POINT_V07_SALT, bytecode]),
    gas: 10_000_000n,
  });
  const receipt = await publicClient.waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
    timeout: 30_000,
  });
  if (receipt.status !== 'success' || !(await hasCode(ENTRY_POINT_V07))) {
    throw new Error(`Chain ${anvil.chainId}: EntryPoint v0.7 did not land at ${ENTRY_POINT_V07}`);
  }
  return ENTRY_POINT_V07;
}

/** The chain's devnet bundler, its submitting key topped up first (a chain loaded from state spent some). */
async function startChainBundler(anvil: RunningAnvil): Promise<DevnetBundler> {
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const address = privateKeyToAccount(DEVNET_BUNDLER_PRIVATE_KEY).address;
  const balance = await createPublicClient({ chain, transport }).getBalance({ address });
  if (balance < DEVNET_BUNDLER_BALANCE / 2n) {
    await createTestClient({ mode: 'anvil', chain, transport }).setBalance({
      address,
      value: DEVNET_BUNDLER_BALANCE,
    });
  }
  return startDevnetBundler({
    chainId: anvil.chainId,
    rpcUrl: anvil.rpcUrl,
    privateKey: DEVNET_BUNDLER_PRIVATE_KEY,
  });
}

// ------------------------------------------------------------------------------ public API

function logger(log: DevnetLog | undefined): (message: string) => void {
  if (!log) return () => {};
  if (typeof log === 'function') return log;
  return (message) => log.info(message);
}

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
