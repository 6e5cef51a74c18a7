// Real bundler port: ERC-4337 bundler JSON-RPC over HTTP, one URL per chain id, EntryPoint v0.7.
// Operations travel in the unpacked v0.7 form (sender, nonce, factory, factoryData, callData, the
// gas limits and fees as hex quantities, paymaster fields, signature); answers are parsed back to
// bigints with viem's formatters, after a check that they have the shape the method promises.

import { isHex, type Address, type Hex } from 'viem';
import {
  formatUserOperation,
  formatUserOperationGas,
  formatUserOperationReceipt,
  formatUserOperationRequest,
  type RpcUserOperation,
  type RpcUserOperationReceipt,
} from 'viem/account-abstraction';
import {
  BundlerError,
  ENTRY_POINT_V07_ADDRESS,
  UnknownBundlerChainError,
  UserOperationReceiptTimeoutError,
  type BundlerPort,
  type UserOperationGasEstimate,
  type UserOperationLookup,
  type UserOperationReceiptV07,
  type UserOperationToEstimate,
  type UserOperationV07,
  type WaitForUserOperationOptions,
} from './port.ts';

export interface JsonRpcBundlerOptions {
  /** Bundler JSON-RPC URL per chain id. */
  urls: Record<number, string>;
  /** Limit of one call (default 10 s). */
  timeoutMs?: number;
  /** For tests of the transport; default the global fetch. */
  fetch?: typeof fetch;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const isQuantity = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v);

export function createJsonRpcBundler(options: JsonRpcBundlerOptions): BundlerPort {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const doFetch = options.fetch ?? fetch;
  const urls = new Map(Object.entries(options.urls).map(([id, url]) => [Number(id), url]));
  const ids = [...urls.keys()].sort((a, b) => a - b);
  let nextId = 1;

  const urlOf = (chainId: number): string => {
    const url = urls.get(chainId);
    if (url === undefined) throw new UnknownBundlerChainError(chainId, ids);
    return url;
  };

  async function call(chainId: number, method: string, params: Json[]): Promise<unknown> {
    const url = urlOf(chainId);
    const fail = (
      kind: BundlerError['kind'],
      message: string,
      extra: { code?: number | null; data?: unknown; cause?: unknown } = {},
    ) => new BundlerError({ kind, chainId, method, message, ...extra });
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const timedOut =
        cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError');
      throw timedOut
        ? fail('timeout', `no answer within ${timeoutMs} ms`, { cause })
        : fail('network', `could not reach the bundler (${(cause as Error).message})`, { cause });
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (cause) {
      const timedOut =
        cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError');
      if (timedOut) throw fail('timeout', `no complete answer within ${timeoutMs} ms`, { cause });
      throw fail(response.ok ? 'malformed' : 'http', `HTTP ${response.status} without a JSON-RPC body`, {
        cause,
      });
    }
    // Bundlers answer JSON-RPC errors with HTTP 200 or 4xx/5xx alike: the body decides.
    if (isObject(body) && isObject(body.error)) {
      const { code, message, data } = body.error;
      throw fail('rpc', typeof message === 'string' ? message : 'error without a message', {
        code: typeof code === 'number' ? code : null,
        data,
      });
    }
    if (!response.ok) throw fail('http', `HTTP ${response.status}`);
    if (!isObject(body) || !('result' in body)) throw fail('malformed', 'an answer without result or error');
    return body.result;
  }

  const malformed = (chainId: number, method: string, what: string) =>
    new BundlerError({ kind: 'malformed', chainId, method, message: `the answer is not ${what}` });

  const rpcOperation = (op: UserOperationToEstimate | UserOperationV07): Json =>
    formatUserOperationRequest(op) as unknown as Json;

  async function getUserOperationReceipt(
    chainId: number,
    hash: Hex,
  ): Promise<UserOperationReceiptV07 | null> {
    const method = 'eth_getUserOperationReceipt';
    const result = await call(chainId, method, [hash]);
    if (result === null) return null;
    if (
      !isObject(result) ||
      typeof result.success !== 'boolean' ||
      !isHex(result.userOpHash) ||
      !isQuantity(result.actualGasCost) ||
      !isQuantity(result.actualGasUsed) ||
      !isObject(result.receipt) ||
      !Array.isArray(result.logs)
    ) {
      throw malformed(chainId, method, 'a UserOperation receipt');
    }
    return formatUserOperationReceipt(
      result as unknown as RpcUserOperationReceipt,
    ) as UserOperationReceiptV07;
  }

  return {
    chainIds: () => [...ids],
    supports: (chainId) => urls.has(chainId),

    async supportedEntryPoints(chainId): Promise<Address[]> {
      const method = 'eth_supportedEntryPoints';
      const result = await call(chainId, method, []);
      if (
        !Array.isArray(result) ||
        !result.every((a) => typeof a === 'string' && /^0x[0-9a-fA-F]{40}$/.test(a))
      ) {
        throw malformed(chainId, method, 'a list of addresses');
      }
      return result as Address[];
    },

    async estimateUserOperationGas(chainId, userOperation): Promise<UserOperationGasEstimate> {
      const method = 'eth_estimateUserOperationGas';
      const result = await call(chainId, method, [rpcOperation(userOperation), ENTRY_POINT_V07_ADDRESS]);
      if (
        !isObject(result) ||
        !isQuantity(result.callGasLimit) ||
        !isQuantity(result.verificationGasLimit) ||
        !isQuantity(result.preVerificationGas)
      ) {
        throw malformed(chainId, method, 'a gas estimate');
      }
      const gas = formatUserOperationGas(result as never) as UserOperationGasEstimate;
      return {
        callGasLimit: gas.callGasLimit,
        verificationGasLimit: gas.verificationGasLimit,
        preVerificationGas: gas.preVerificationGas,
        ...(gas.paymasterVerificationGasLimit === undefined
          ? {}
          : { paymasterVerificationGasLimit: gas.paymasterVerificationGasLimit }),
        ...(gas.paymasterPostOpGasLimit === undefined
          ? {}
          : { paymasterPostOpGasLimit: gas.paymasterPostOpGasLimit }),
      };
    },

    async sendUserOperation(chainId, userOperation): Promise<Hex> {
      const method = 'eth_sendUserOperation';
      const result = await call(chainId, method, [rpcOperation(userOperation), ENTRY_POINT_V07_ADDRESS]);
      if (typeof result !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(result)) {
        throw malformed(chainId, method, 'a userOpHash');
      }
      return result as Hex;
    },

    getUserOperationReceipt,

    async getUserOperationByHash(chainId, hash): Promise<UserOperationLookup | null> {
      const method = 'eth_getUserOperationByHash';
      const result = await call(chainId, method, [hash]);
      if (result === null) return null;
      if (!isObject(result) || !isObject(result.userOperation) || typeof result.entryPoint !== 'string') {
        throw malformed(chainId, method, 'a UserOperation lookup');
      }
      const orNull = <T>(v: unknown, parse: (v: Hex) => T): T | null => (isHex(v) ? parse(v) : null);
      return {
        userOperation: formatUserOperation(
          result.userOperation as unknown as RpcUserOperation<'0.7'>,
        ) as UserOperationV07,
        entryPoint: result.entryPoint as Address,
        blockNumber: orNull(result.blockNumber, BigInt),
        blockHash: orNull(result.blockHash, (v) => v),
        transactionHash: orNull(result.transactionHash, (v) => v),
      };
    },

    async waitForUserOperationReceipt(
      chainId,
      hash,
      wait: WaitForUserOperationOptions = {},
    ): Promise<UserOperationReceiptV07> {
      const timeout = wait.timeoutMs ?? 60_000;
      const interval = wait.pollIntervalMs ?? 500;
      const deadline = performance.now() + timeout;
      for (;;) {
        const receipt = await getUserOperationReceipt(chainId, hash);
        if (receipt) return receipt;
        if (performance.now() + interval > deadline)
          throw new UserOperationReceiptTimeoutError(chainId, hash, timeout);
        await new Promise((resolve) => setTimeout(resolve, interval));
      }
    },
  };
}
