// Real chain port: viem public clients over HTTP JSON-RPC, one per configured chain id, and
// (optionally) wallet clients for the relayer key.

import {
  createPublicClient,
  createWalletClient,
  defineChain,
  erc20Abi,
  http,
  keccak256,
  parseAbi,
  TransactionReceiptNotFoundError,
  type Account,
  type Chain,
  type Hex,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { base, baseSepolia, polygon } from 'viem/chains';
import {
  NoRelayerError,
  UnknownChainError,
  type BlockHead,
  type ChainClient,
  type ChainPort,
  type Erc20Metadata,
  type FeesPerGas,
  type SignatureCheck,
  type SignedRelayerTx,
  type TokenDomain,
  type TxReceipt,
  type TxRequest,
  type WaitOptions,
} from './port.ts';

export interface ViemChainPortOptions {
  /** JSON-RPC URL per chain id. */
  rpcUrls: Record<number, string>;
  /** Private key of the relayer (the platform's own signer for on-chain writes; it pays their gas). */
  relayerPrivateKey?: Hex;
  /** Timeout of one RPC request (default 10 s). */
  requestTimeoutMs?: number;
  /** Retries of a failed RPC request (default 2). */
  retryCount?: number;
  /** Receipt polling interval (default: viem's, from the chain's block time). */
  pollingIntervalMs?: number;
  /** Default timeout of waitForReceipt (default 60 s). */
  receiptTimeoutMs?: number;
}

/** Token functions beyond ERC-20 that the port reads (EIP-3009 / EIP-2612 tokens such as USDC). */
export const eip3009ReadAbi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function version() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
]);

const KNOWN_CHAINS: Record<number, Chain> = {
  [base.id]: base,
  [baseSepolia.id]: baseSepolia,
  [polygon.id]: polygon,
};

/** viem chain definition for `chainId` served at `rpcUrl` (a known chain's definition when there is one). */
export function chainDefinition(chainId: number, rpcUrl: string): Chain {
  const rpcUrls = { default: { http: [rpcUrl] } };
  const known = KNOWN_CHAINS[chainId];
  if (known) return { ...known, rpcUrls };
  return defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls,
  });
}

function toReceipt(r: TransactionReceipt): TxReceipt {
  return {
    hash: r.transactionHash,
    status: r.status,
    blockNumber: r.blockNumber,
    from: r.from,
    to: r.to,
    contractAddress: r.contractAddress ?? null,
    gasUsed: r.gasUsed,
    effectiveGasPrice: r.effectiveGasPrice,
    l1Fee: (r as { l1Fee?: bigint | null }).l1Fee ?? null,
    logs: r.logs,
  };
}

export function createViemChainPort(options: ViemChainPortOptions): ChainPort {
  const ids = Object.keys(options.rpcUrls)
    .map(Number)
    .sort((a, b) => a - b);
  const clients = new Map<number, ChainClient>();
  const chains = new Map<number, Chain>();
  const transports = new Map<number, Transport>();
  for (const id of ids) {
    const url = options.rpcUrls[id];
    if (!Number.isSafeInteger(id) || id <= 0 || url === undefined)
      throw new Error(`Bad RPC entry for chain ${id}`);
    const chain = chainDefinition(id, url);
    const transport = http(url, {
      timeout: options.requestTimeoutMs ?? 10_000,
      retryCount: options.retryCount ?? 2,
    });
    chains.set(id, chain);
    transports.set(id, transport);
    clients.set(
      id,
      createPublicClient({
        chain,
        transport,
        ...(options.pollingIntervalMs === undefined ? {} : { pollingInterval: options.pollingIntervalMs }),
      }) as ChainClient,
    );
  }

  const relayer: Account | null =
    options.relayerPrivateKey === undefined
      ? null
      : privateKeyToAccount(options.relayerPrivateKey, { nonceManager });
  const wallets = new Map<number, WalletClient<Transport, Chain, Account>>();

  const client = (chainId: number): ChainClient => {
    const c = clients.get(chainId);
    if (!c) throw new UnknownChainError(chainId, ids);
    return c;
  };

  const wallet = (chainId: number): WalletClient<Transport, Chain, Account> => {
    if (!relayer) throw new NoRelayerError();
    const existing = wallets.get(chainId);
    if (existing) return existing;
    const chain = chains.get(chainId);
    const transport = transports.get(chainId);
    if (!chain || !transport) throw new UnknownChainError(chainId, ids);
    const created = createWalletClient({ account: relayer, chain, transport });
    wallets.set(chainId, created);
    return created;
  };

  const getReceipt = async (chainId: number, hash: Hex): Promise<TxReceipt | null> => {
    try {
      return toReceipt(await client(chainId).getTransactionReceipt({ hash }));
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    }
  };

  return {
    chainIds: () => [...ids],
    supports: (chainId) => clients.has(chainId),
    publicClient: client,

    remoteChainId: async (chainId) => client(chainId).getChainId(),
    getBlockNumber: async (chainId) => client(chainId).getBlockNumber({ cacheTime: 0 }),
    async latestBlock(chainId): Promise<BlockHead> {
      const b = await client(chainId).getBlock({ blockTag: 'latest' });
      return {
        number: b.number,
        hash: b.hash,
        timestamp: b.timestamp,
        baseFeePerGas: b.baseFeePerGas ?? null,
      };
    },
    getBalance: async (chainId, address) => client(chainId).getBalance({ address }),
    getCode: async (chainId, address) => client(chainId).getCode({ address }),
    async isContract(chainId, address) {
      const code = await client(chainId).getCode({ address });
      return code !== undefined && code !== '0x';
    },

    erc20Balance: async (chainId, token, holder) =>
      client(chainId).readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [holder],
      }),
    erc20Allowance: async (chainId, token, owner, spender) =>
      client(chainId).readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [owner, spender],
      }),
    async erc20Metadata(chainId, token): Promise<Erc20Metadata> {
      const c = client(chainId);
      const [name, symbol, decimals] = await Promise.all([
        c.readContract({ address: token, abi: erc20Abi, functionName: 'name' }),
        c.readContract({ address: token, abi: erc20Abi, functionName: 'symbol' }),
        c.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }),
      ]);
      return { name, symbol, decimals };
    },

    authorizationState: async (chainId, token, authorizer, nonce) =>
      client(chainId).readContract({
        address: token,
        abi: eip3009ReadAbi,
        functionName: 'authorizationState',
        args: [authorizer, nonce],
      }),
    async tokenDomain(chainId, token): Promise<TokenDomain> {
      const c = client(chainId);
      const [name, version, separator] = await Promise.all([
        c.readContract({ address: token, abi: erc20Abi, functionName: 'name' }),
        c.readContract({ address: token, abi: eip3009ReadAbi, functionName: 'version' }),
        c.readContract({ address: token, abi: eip3009ReadAbi, functionName: 'DOMAIN_SEPARATOR' }),
      ]);
      return { name, version, chainId, verifyingContract: token, separator };
    },

    verifyHash: async (chainId, check: SignatureCheck) =>
      client(chainId).verifyHash({ address: check.signer, hash: check.hash, signature: check.signature }),

    getReceipt,
    async waitForReceipt(chainId, hash, opts: WaitOptions = {}): Promise<TxReceipt> {
      const r = await client(chainId).waitForTransactionReceipt({
        hash,
        timeout: opts.timeoutMs ?? options.receiptTimeoutMs ?? 60_000,
        ...(opts.confirmations === undefined ? {} : { confirmations: opts.confirmations }),
      });
      return toReceipt(r);
    },

    relayerAddress: () => relayer?.address ?? null,
    async sendTransaction(chainId, tx: TxRequest): Promise<Hex> {
      const w = wallet(chainId);
      return w.sendTransaction({
        account: w.account,
        chain: w.chain,
        to: tx.to,
        ...(tx.data === undefined ? {} : { data: tx.data }),
        ...(tx.value === undefined ? {} : { value: tx.value }),
        ...(tx.gas === undefined ? {} : { gas: tx.gas }),
      });
    },

    transactionCount: async (chainId, address, blockTag) =>
      client(chainId).getTransactionCount({ address, blockTag }),
    async feesPerGas(chainId): Promise<FeesPerGas> {
      const fees = await client(chainId).estimateFeesPerGas({ type: 'eip1559' });
      return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
    },
    sendRawTransaction: async (chainId, raw) =>
      client(chainId).sendRawTransaction({ serializedTransaction: raw }),
    async signRelayerTransaction(chainId, tx): Promise<SignedRelayerTx> {
      const w = wallet(chainId);
      // The nonce comes from the same manager sendTransaction uses, so the relayer's transactions
      // of this process never share one.
      const request = await w.prepareTransactionRequest({
        account: w.account,
        chain: w.chain,
        to: tx.to,
        value: tx.value,
        gas: tx.gas,
        ...(tx.data === undefined ? {} : { data: tx.data }),
      });
      const raw = await w.account.signTransaction!(
        request as Parameters<NonNullable<Account['signTransaction']>>[0],
      );
      return { raw, hash: keccak256(raw), nonce: request.nonce, from: w.account.address };
    },
    releaseRelayerNonce(chainId) {
      if (relayer) nonceManager.reset({ address: relayer.address, chainId });
    },
  };
}
