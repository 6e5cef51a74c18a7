// What goes on a devnet chain: the contracts and tokens it deploys, in their fixed order
// (deploymentPlan), the addresses they land at (expectedDevnetContracts), and the markets its
// Polymarket CLOB fake lists. The keys, chain ids and real chains' token addresses are
// keys-and-addresses.ts's, the contracts' types deployed-contracts.ts's; both are re-exported here.

import type { createPublicClient } from 'viem';
import {
  concat,
  getContractAddress,
  hexToBigInt,
  encodeFunctionData,
  keccak256,
  pad,
  parseAbi,
  parseUnits,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { type ClobFakeMarket } from './fakes/clob.ts';
import { CTF_EXCHANGE_V2 } from '../adapters/pm-venue/polymarket.ts';
import {
  type DeployedKey,
  type DevnetContracts,
  type DevnetPolymarketContracts,
  type DevnetToken,
} from './deployed-contracts.ts';
import {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  DEVNET_CANONICAL_TOKENS,
  DEVNET_CCTP_ATTESTER,
  DEVNET_CCTP_DOMAINS,
  DEVNET_DEPLOYER,
  DEVNET_RAMP_ADMIN,
  ENTRY_POINT_V07,
  POLYGON_CHAIN_ID,
  USDC_EIP712_NAME,
} from './keys-and-addresses.ts';
export {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  CREATE2_DEPLOYER,
  DEVNET_BUNDLER_BALANCE,
  DEVNET_BUNDLER_PRIVATE_KEY,
  DEVNET_CANONICAL_TOKENS,
  DEVNET_CCTP_ATTESTER,
  DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
  DEVNET_CCTP_DOMAINS,
  DEVNET_DEPLOYER,
  DEVNET_DEPLOYER_PRIVATE_KEY,
  DEVNET_RAMP_ADMIN,
  DEVNET_RAMP_ADMIN_PRIVATE_KEY,
  ENTRY_POINT_V07,
  ENTRY_POINT_V07_SALT,
  POLYGON_CHAIN_ID,
  USDC_EIP712_NAME,
} from './keys-and-addresses.ts';
export {
  type DeployedKey,
  type DevnetContracts,
  type DevnetPolymarketContracts,
  type DevnetToken,
} from './deployed-contracts.ts';

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

export function devnetMarket(
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

// ------------------------------------------------------------------------------ deployment

/** A call the deployer makes between deployments (it takes a nonce of its own). */
export interface DeployerCall {
  call: string;
  to: (deployed: Partial<Record<DeployedKey, Address>>) => Address;
  data: Hex;
  /** Whether the call's effect is in place (checked on a chain loaded from its saved state). */
  done: (
    client: ReturnType<typeof createPublicClient>,
    deployed: Partial<Record<DeployedKey, Address>>,
  ) => Promise<boolean>;
}

export type PlanStep = Deployment | DeployerCall;

export interface Deployment {
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
export function placedAt(chainId: number, d: Deployment, deployedAt: Address): Address {
  return DEVNET_CANONICAL_TOKENS[chainId]?.[d.key] ?? deployedAt;
}

/**
 * A field of a JSON file in devnet/vendor/ holding creation code as hex, and the constructor's
 * signature (`constructor(address entrypoint)`), which the file names in a field of its own.
 */
export interface VendorArtifact {
  file: string;
  creationCodeField: string;
  constructorField: string;
}

export const KERNEL_V3_1_FILE = 'kernel-v3.1.json';

/** Feed decimals and the answers the devnet starts with (USD per unit, 8 decimals as on Base). */
export const DEVNET_FEED_DECIMALS = 8;
export const DEVNET_START_PRICES_USD: Record<string, string> = {
  'ETH/USD': '3000',
  'USDC/USD': '1',
  'EURC/USD': '1.08',
};

export function feedDeployment(key: DeployedKey, pair: string): Deployment {
  const usd = DEVNET_START_PRICES_USD[pair];
  if (!usd) throw new Error(`No start price for ${pair}`);
  return {
    key,
    contract: 'DevPriceFeed',
    args: [DEVNET_FEED_DECIMALS, pair, parseUnits(usd, DEVNET_FEED_DECIMALS)],
    feed: pair,
  };
}

export const v3FactoryAbi = parseAbi([
  'function enableFeeAmount(uint24 fee, int24 tickSpacing)',
  'function feeAmountTickSpacing(uint24 fee) view returns (int24)',
]);

export const need = (deployed: Partial<Record<DeployedKey, Address>>, key: DeployedKey): Address => {
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

export const SAFE_ARTIFACTS = '@safe-global/safe-smart-account/build/artifacts/contracts';

/**
 * Polygon: what a Polymarket venue account uses on chain besides USDC.e and pUSD. Safe v1.5.0
 * (singletons, proxy factory, fallback handler, MultiSend) and Gnosis' ConditionalTokens from
 * their npm build artifacts, and the devnet's own collateral ramps: the onramp keeps the reserve
 * and pays out only to the offramp, whose address (the next nonce) it is given.
 */
export function polymarketAccountDeployments(): Deployment[] {
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
export function cctpDeployments(chainId: number): Deployment[] {
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
