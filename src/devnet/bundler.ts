// The devnet bundler: a small ERC-4337 bundler for EntryPoint v0.7 on one devnet chain, speaking
// the bundler JSON-RPC that the bundler port (src/adapters/bundler/json-rpc.ts) speaks to Alto or
// Pimlico: eth_chainId, eth_supportedEntryPoints, eth_estimateUserOperationGas,
// eth_sendUserOperation, eth_getUserOperationReceipt, eth_getUserOperationByHash.
//
// No mempool: each operation is checked by simulating `handleOps` and then submitted at once, alone
// in its bundle, from the bundler's own key (also the beneficiary). Receipts and lookups are read
// back from the chain (the EntryPoint's UserOperationEvent), so they survive a devnet restart.
// Listens on 127.0.0.1 only. Development and tests only.
//
// This file starts the bundler and answers its JSON-RPC over HTTP; its parts are in bundler/: the
// params and errors (protocol.ts), the gas rules and estimation (gas.ts), the EntryPoint
// simulations (simulation.ts), submitting (submit.ts), receipts and lookups (lookups.ts), and
// what they share (context.ts).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { toHex, type Address, type Hex } from 'viem';
import { createBundlerContext } from './bundler/context.ts';
import { estimate } from './bundler/gas.ts';
import { lookup, receipt } from './bundler/lookups.ts';
import {
  BUNDLER_ERROR,
  checkEntryPoint,
  ENTRY_POINT,
  parseOperation,
  RpcError,
  userOpHashParam,
} from './bundler/protocol.ts';
import { send } from './bundler/submit.ts';

export { BUNDLER_ERROR } from './bundler/protocol.ts';
export { minimumPreVerificationGas } from './bundler/gas.ts';

export interface DevnetBundlerOptions {
  chainId: number;
  /** The devnet chain's JSON-RPC URL (its anvil). */
  rpcUrl: string;
  /** Key that submits `handleOps` and is its beneficiary; it needs ETH on the chain. */
  privateKey: Hex;
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
}

export interface DevnetBundler {
  chainId: number;
  url: string;
  port: number;
  /** The submitting key's address (the beneficiary of every bundle). */
  address: Address;
  stop(): Promise<void>;
}

export async function startDevnetBundler(options: DevnetBundlerOptions): Promise<DevnetBundler> {
  const { chainId, rpcUrl } = options;
  const ctx = createBundlerContext(chainId, rpcUrl, options.privateKey);
  let queue: Promise<unknown> = Promise.resolve();

  async function dispatch(method: unknown, params: unknown[]): Promise<unknown> {
    switch (method) {
      case 'eth_chainId':
        return toHex(ctx.chainId);
      case 'eth_supportedEntryPoints':
        return [ENTRY_POINT];
      case 'eth_estimateUserOperationGas': {
        checkEntryPoint(params[1]);
        return estimate(ctx, parseOperation(params[0], false));
      }
      case 'eth_sendUserOperation': {
        checkEntryPoint(params[1]);
        const op = parseOperation(params[0], true);
        // One submission at a time: each is validated against the chain its predecessor left.
        const result = queue.then(() => send(ctx, op));
        queue = result.catch(() => undefined);
        return result;
      }
      case 'eth_getUserOperationReceipt':
        return receipt(ctx, userOpHashParam(params[0]));
      case 'eth_getUserOperationByHash':
        return lookup(ctx, userOpHashParam(params[0]));
      default:
        throw new RpcError(
          BUNDLER_ERROR.methodNotFound,
          `the method ${String(method)} does not exist / is not available`,
        );
    }
  }

  async function answer(request: unknown): Promise<object> {
    const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    const id = r.id ?? null;
    try {
      if (r.jsonrpc !== '2.0' || typeof r.method !== 'string') {
        throw new RpcError(-32600, 'not a JSON-RPC 2.0 request');
      }
      const params = r.params === undefined ? [] : r.params;
      if (!Array.isArray(params)) throw new RpcError(BUNDLER_ERROR.invalidParams, 'params must be an array');
      return { jsonrpc: '2.0', id, result: await dispatch(r.method, params) };
    } catch (err) {
      const error =
        err instanceof RpcError
          ? { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) }
          : {
              code: BUNDLER_ERROR.internal,
              message: (err as Error).message.split('\n')[0] ?? 'internal error',
            };
      return { jsonrpc: '2.0', id, error };
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') {
      reply(405, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'POST a JSON-RPC request' } });
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > 1_000_000) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        reply(200, {
          jsonrpc: '2.0',
          id: null,
          error: { code: BUNDLER_ERROR.parseError, message: 'parse error' },
        });
        return;
      }
      const work = Array.isArray(body) ? Promise.all(body.map(answer)) : answer(body);
      void work.then((out) => reply(200, out));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  let stopped: Promise<void> | null = null;
  return {
    chainId,
    url: `http://127.0.0.1:${port}`,
    port,
    address: ctx.account.address,
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}
