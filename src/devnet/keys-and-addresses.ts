// The devnet's fixed keys and addresses: the keys of its roles (deployer, bundler, CCTP attester,
// collateral-ramp admin; anvil's public development accounts or derived from a fixed phrase, never
// secrets), the canonical contracts it expects (EntryPoint v0.7, Arachnid's CREATE2 deployer), the
// chain ids and CCTP domains, and where the real chains keep the tokens it stands in for. The
// deploy plan (plan.ts) places its contracts with them.

import { keccak256, parseEther, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type DeployedKey } from './deployed-contracts.ts';

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
