// What a devnet chain holds, as types: the address of each contract and token the deploy plan
// (plan.ts) puts there, by key (DevnetContracts, each documented with the chains it is on and the
// interface it has), a token's details, and chain 137's Polymarket contracts in one object.

import { type Address } from 'viem';

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

export type DeployedKey = Exclude<keyof DevnetContracts, 'entryPoint'>;
