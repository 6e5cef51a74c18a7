// What goes on a devnet chain: the keys and addresses the devnet uses, the contracts and tokens
// it deploys, in their fixed order (deploymentPlan), and where its tokens live (the real chains'
// addresses).

import type { createPublicClient } from 'viem';
import {
  concat,
  getContractAddress,
  hexToBigInt,
  encodeFunctionData,
  keccak256,
  pad,
  parseAbi,
  parseEther,
  parseUnits,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type ClobFakeMarket } from './fakes/clob.ts';
import { CTF_EXCHANGE_V2 } from '../adapters/pm-venue/polymarket.ts';

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
export const DEVNET_BUNDLER_BALANCE = parseEther('10000');

/** Canonical ERC-4337 EntryPoint v0.7 (same address on every chain, devnet included). */
export const ENTRY_POINT_V07: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
/** Arachnid's deterministic CREATE2 deployer, which anvil pre-installs. */
export const CREATE2_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
/** Salt that puts @account-abstraction/contracts@0.7.0's EntryPoint at ENTRY_POINT_V07. */
export const ENTRY_POINT_V07_SALT: Hex = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3';

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

/** EIP-712 token name of USDC per chain (the real tokens differ: Base Sepolia says "USDC"). */
export const USDC_EIP712_NAME: Record<number, string> = { 84532: 'USDC', 8453: 'USD Coin', 137: 'USD Coin' };
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

// ------------------------------------------------------------------------------ deployment

export type DeployedKey = Exclude<keyof DevnetContracts, 'entryPoint'>;

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
