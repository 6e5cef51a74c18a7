// The chain port: what the service needs from EVM chains, one JSON-RPC endpoint per chain id.
// The real implementation (viem.ts) talks JSON-RPC; in development and tests it is pointed at
// the devnet's anvil instances, so there is no separate sandbox implementation.

import type { Address, Chain, Hex, Log, PublicClient, Transport } from 'viem';

export type ChainClient = PublicClient<Transport, Chain>;

export interface Erc20Metadata {
  name: string;
  symbol: string;
  decimals: number;
}

/** EIP-712 domain of an EIP-3009 token as the token itself reports it. */
export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
  /** `DOMAIN_SEPARATOR()` as read on-chain; compare with a locally computed one. */
  separator: Hex;
}

export interface BlockHead {
  number: bigint;
  hash: Hex;
  /** Seconds since the epoch (chain time, which EIP-3009 validity windows use). */
  timestamp: bigint;
  baseFeePerGas: bigint | null;
}

export interface TxReceipt {
  hash: Hex;
  status: 'success' | 'reverted';
  blockNumber: bigint;
  from: Address;
  to: Address | null;
  contractAddress: Address | null;
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  /** OP-stack chains (Base): the L1 data fee the sender paid on top of gasUsed × price; else null. */
  l1Fee: bigint | null;
  logs: Log[];
}

export interface TxRequest {
  to: Address;
  data?: Hex;
  value?: bigint;
  /** Gas limit; estimated when absent. */
  gas?: bigint;
}

export interface SignatureCheck {
  /** The address that supposedly signed: an EOA, a deployed smart account, or a counterfactual one. */
  signer: Address;
  hash: Hex;
  /** 65-byte ECDSA, an ERC-1271 account signature, or an ERC-6492-wrapped one. */
  signature: Hex;
}

export interface WaitOptions {
  timeoutMs?: number;
  confirmations?: number;
}

/** Raised for a chain id without a configured RPC endpoint. */
export class UnknownChainError extends Error {
  constructor(
    readonly chainId: number,
    known: readonly number[],
  ) {
    super(`Chain ${chainId} is not configured (configured: ${known.join(', ') || 'none'})`);
    this.name = 'UnknownChainError';
  }
}

/** Raised by write operations when no relayer key is configured. */
export class NoRelayerError extends Error {
  constructor() {
    super('No relayer key is configured for on-chain writes');
    this.name = 'NoRelayerError';
  }
}

export interface ChainPort {
  /** Configured chain ids, ascending. */
  chainIds(): number[];
  supports(chainId: number): boolean;
  /** The viem public client of a chain, for reads the port does not wrap. Throws UnknownChainError. */
  publicClient(chainId: number): ChainClient;

  /** Asks the endpoint for its chain id (to check an RPC URL points at the chain it claims). */
  remoteChainId(chainId: number): Promise<number>;
  getBlockNumber(chainId: number): Promise<bigint>;
  latestBlock(chainId: number): Promise<BlockHead>;
  /** Native balance in wei. */
  getBalance(chainId: number, address: Address): Promise<bigint>;
  /** Deployed code, or undefined for an EOA / empty address. */
  getCode(chainId: number, address: Address): Promise<Hex | undefined>;
  isContract(chainId: number, address: Address): Promise<boolean>;

  erc20Balance(chainId: number, token: Address, holder: Address): Promise<bigint>;
  erc20Allowance(chainId: number, token: Address, owner: Address, spender: Address): Promise<bigint>;
  erc20Metadata(chainId: number, token: Address): Promise<Erc20Metadata>;

  /** EIP-3009: whether (authorizer, nonce) is used or canceled on `token`. */
  authorizationState(chainId: number, token: Address, authorizer: Address, nonce: Hex): Promise<boolean>;
  /** `name()`, `version()` and `DOMAIN_SEPARATOR()` of an EIP-3009 / EIP-2612 token. */
  tokenDomain(chainId: number, token: Address): Promise<TokenDomain>;

  /**
   * Whether `signature` is `signer`'s over `hash`: ECDSA for EOAs, ERC-1271 for deployed
   * accounts, ERC-6492 for counterfactual ones. RPC failures throw; a bad signature is false.
   */
  verifyHash(chainId: number, check: SignatureCheck): Promise<boolean>;

  getReceipt(chainId: number, hash: Hex): Promise<TxReceipt | null>;
  waitForReceipt(chainId: number, hash: Hex, options?: WaitOptions): Promise<TxReceipt>;

  /**
   * Address of the relayer: the platform's own signer, which sends and pays for the platform's
   * transactions (payment settlements, the prediction-market wrap relay). Null without one. Not
   * the executor (the session signer delegations name), which never sends transactions itself.
   */
  relayerAddress(): Address | null;
  /** Signs and sends a transaction from the relayer key. Throws NoRelayerError without one. */
  sendTransaction(chainId: number, tx: TxRequest): Promise<Hex>;
  /**
   * Signs a transaction from the relayer key on its next nonce without sending it, so that the
   * caller can record it first and then broadcast it with sendRawTransaction. When it is not
   * broadcast after all, or its broadcast fails, call releaseRelayerNonce: the next one then
   * takes the chain's pending count again instead of leaving a gap. Throws NoRelayerError.
   */
  signRelayerTransaction(
    chainId: number,
    tx: TxRequest & { value: bigint; gas: bigint },
  ): Promise<SignedRelayerTx>;
  /** Forgets the relayer's nonces handed out on the chain (see signRelayerTransaction). */
  releaseRelayerNonce(chainId: number): void;

  /** Transactions of `address` on the chain: mined (`latest`) or including the mempool (`pending`). */
  transactionCount(chainId: number, address: Address, blockTag: 'latest' | 'pending'): Promise<number>;
  /** Fee caps for an EIP-1559 transaction sent now (the chain's estimate). */
  feesPerGas(chainId: number): Promise<FeesPerGas>;
  /** Broadcasts a transaction signed elsewhere (the executor's); returns its hash. */
  sendRawTransaction(chainId: number, raw: Hex): Promise<Hex>;
}

export interface SignedRelayerTx {
  /** The signed transaction, ready for sendRawTransaction. */
  raw: Hex;
  hash: Hex;
  nonce: number;
  from: Address;
}

export interface FeesPerGas {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}
