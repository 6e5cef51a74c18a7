// The bundler port's JSON-RPC implementation against two real bundlers on a devnet chain: the
// devnet's own (src/devnet/bundler.ts) and Pimlico's Alto (npm @pimlico/alto). The same code runs
// a Kernel v3.1 account's life through each: its first operation deploys it from factory data,
// a second one follows, a forged signature is refused at send, and lookups answer. A loopback
// server then stands in for a bundler that times out or answers out of format.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  http,
  parseAbi,
  parseEther,
  type Address,
} from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { altoInstalled, startAlto, type RunningAlto } from '../../../test/support/alto.ts';
import {
  devnetKernelSmartAccount,
  draftUserOperation,
  signedUserOperation,
} from '../../../test/support/kernel.ts';
import { BASE_SEPOLIA_CHAIN_ID, devnetChain, ENTRY_POINT_V07 } from '../../devnet/devnet.ts';
import { fundAddress } from '../../devnet/faucet.ts';
import { chainDefinition } from '../chain/viem.ts';
import { createJsonRpcBundler } from './json-rpc.ts';
import {
  BundlerError,
  UnknownBundlerChainError,
  UserOperationReceiptTimeoutError,
  type BundlerPort,
} from './port.ts';

const devnet = inject('devnet');
const CHAIN = BASE_SEPOLIA_CHAIN_ID;
const chain = devnetChain(devnet, CHAIN);
const publicClient = createPublicClient({
  chain: chainDefinition(CHAIN, chain.rpcUrl),
  transport: http(chain.rpcUrl, { retryCount: 0 }),
  pollingInterval: 20,
});
const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
const depositOf = (account: Address) =>
  publicClient.readContract({
    address: ENTRY_POINT_V07,
    abi: entryPoint07Abi,
    functionName: 'balanceOf',
    args: [account],
  });

interface BundlerUnderTest {
  name: string;
  /** Whether it can run here; a reason to skip when it cannot. */
  skip: string | false;
  start(): Promise<{ url: string; stop?: () => Promise<void> }>;
}

const bundlers: BundlerUnderTest[] = [
  {
    name: 'the devnet bundler',
    skip: false,
    start: () => Promise.resolve({ url: chain.bundlerUrl! }),
  },
  {
    name: 'Alto',
    skip: altoInstalled ? false : '@pimlico/alto is not installed (npm install adds it as a dev dependency)',
    start: async () => {
      const alto: RunningAlto = await startAlto(chain.rpcUrl);
      return alto;
    },
  },
];

describe.each(bundlers)('the bundler port against $name', (b) => {
  let bundler: BundlerPort;
  let stop: (() => Promise<void>) | undefined;
  const owner = privateKeyToAccount(generatePrivateKey());
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  let account: Awaited<ReturnType<typeof devnetKernelSmartAccount>>;
  let firstHash: `0x${string}`;
  /** Kernel's nonce key (root validator) in the high 192 bits, the sequence in the low 64. */
  let firstNonce: bigint;

  beforeAll(async () => {
    if (b.skip) return;
    const started = await b.start();
    stop = started.stop;
    bundler = createJsonRpcBundler({ urls: { [CHAIN]: started.url }, timeoutMs: 30_000 });
    account = await devnetKernelSmartAccount(publicClient, chain, owner);
    await fundAddress(devnet, { chainId: CHAIN, address: account.address, eth: parseEther('1') });
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it.skipIf(b.skip)('serves EntryPoint v0.7 on its chain only', async () => {
    expect(bundler.supports(CHAIN)).toBe(true);
    expect(bundler.supports(8453)).toBe(false);
    expect((await bundler.supportedEntryPoints(CHAIN)).map((a) => a.toLowerCase())).toContain(
      ENTRY_POINT_V07.toLowerCase(),
    );
  });

  it.skipIf(b.skip)(
    "deploys a counterfactual Kernel account with its first operation and moves the account's ETH",
    async () => {
      expect(await publicClient.getCode({ address: account.address })).toBeUndefined();
      const draft = await draftUserOperation(publicClient, account, [
        { to: recipient, value: parseEther('0.1') },
      ]);
      expect(draft.factory).toBe(chain.contracts.kernelFactory);
      const gas = await bundler.estimateUserOperationGas(CHAIN, draft);
      expect(gas.verificationGasLimit).toBeGreaterThan(100_000n); // the account's creation is validation
      expect(gas.callGasLimit).toBeGreaterThan(0n);
      const op = await signedUserOperation(account, draft, gas);
      firstNonce = op.nonce;
      expect(firstNonce % 2n ** 64n).toBe(0n);
      firstHash = await bundler.sendUserOperation(CHAIN, op);
      const receipt = await bundler.waitForUserOperationReceipt(CHAIN, firstHash, {
        timeoutMs: 30_000,
        pollIntervalMs: 100,
      });
      expect(receipt.success).toBe(true);
      expect(receipt.userOpHash).toBe(firstHash);
      expect(receipt.sender.toLowerCase()).toBe(account.address.toLowerCase());
      expect(receipt.nonce).toBe(op.nonce);
      expect(receipt.receipt.status).toBe('success');

      expect(((await publicClient.getCode({ address: account.address })) ?? '0x').length).toBeGreaterThan(2);
      expect(await publicClient.getBalance({ address: recipient })).toBe(parseEther('0.1'));
      // What the account holds, ETH and EntryPoint deposit (the unused prefund), is what it had
      // less the 0.1 ETH sent and the gas the receipt says it paid.
      const left =
        (await publicClient.getBalance({ address: account.address })) + (await depositOf(account.address));
      expect(left).toBe(parseEther('0.9') - receipt.actualGasCost);
    },
  );

  it.skipIf(b.skip)('runs a second operation on the deployed account with the next nonce', async () => {
    const draft = await draftUserOperation(publicClient, account, [
      {
        to: chain.contracts.usdc,
        data: encodeMint(recipient, 2_500_000n),
      },
    ]);
    expect(draft.factory).toBeUndefined();
    const gas = await bundler.estimateUserOperationGas(CHAIN, draft);
    const op = await signedUserOperation(account, draft, gas);
    const hash = await bundler.sendUserOperation(CHAIN, op);
    const receipt = await bundler.waitForUserOperationReceipt(CHAIN, hash, {
      timeoutMs: 30_000,
      pollIntervalMs: 100,
    });
    expect(receipt.success).toBe(true);
    expect(receipt.nonce).toBe(firstNonce + 1n);
    expect(
      await publicClient.readContract({
        address: chain.contracts.usdc,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [recipient],
      }),
    ).toBe(2_500_000n);
    // The op's own logs: the USDC Transfer of the mint is among them.
    expect(receipt.logs.some((l) => l.address.toLowerCase() === chain.contracts.usdc.toLowerCase())).toBe(
      true,
    );
  });

  it.skipIf(b.skip)(
    'refuses an operation signed by another key with AA24 at send, and nothing runs',
    async () => {
      const stranger = await devnetKernelSmartAccount(
        publicClient,
        chain,
        privateKeyToAccount(generatePrivateKey()),
      );
      const draft = await draftUserOperation(publicClient, account, [
        { to: recipient, value: parseEther('0.2') },
      ]);
      const gas = await bundler.estimateUserOperationGas(CHAIN, draft);
      const op = await signedUserOperation(account, draft, gas);
      op.signature = await stranger.signUserOperation(op);
      const refused = await bundler.sendUserOperation(CHAIN, op).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BundlerError);
      expect(refused).toMatchObject({ kind: 'rpc', aaCode: 'AA24', refusal: 'validation' });
      expect([-32500, -32507]).toContain((refused as BundlerError).code);
      expect(await account.getNonce({ key: 0n })).toBe(firstNonce + 2n);
      expect(await publicClient.getBalance({ address: recipient })).toBe(parseEther('0.1'));
    },
  );

  it.skipIf(b.skip)('answers getUserOperationByHash with the operation and where it landed', async () => {
    const receipt = await bundler.getUserOperationReceipt(CHAIN, firstHash);
    const found = await bundler.getUserOperationByHash(CHAIN, firstHash);
    expect(found).not.toBeNull();
    expect(found!.entryPoint.toLowerCase()).toBe(ENTRY_POINT_V07.toLowerCase());
    expect(found!.transactionHash).toBe(receipt!.receipt.transactionHash);
    expect(found!.blockNumber).toBe(receipt!.receipt.blockNumber);
    expect(found!.userOperation.sender.toLowerCase()).toBe(account.address.toLowerCase());
    expect(found!.userOperation.nonce).toBe(firstNonce);
    expect(found!.userOperation.factory?.toLowerCase()).toBe(chain.contracts.kernelFactory!.toLowerCase());
    const unknown = `0x${'ab'.repeat(32)}` as const;
    expect(await bundler.getUserOperationByHash(CHAIN, unknown)).toBeNull();
    expect(await bundler.getUserOperationReceipt(CHAIN, unknown)).toBeNull();
  });
});

function encodeMint(to: Address, amount: bigint) {
  return encodeFunctionData({ abi: mintAbi, functionName: 'mint', args: [to, amount] });
}

describe('BundlerError', () => {
  it('classifies the EntryPoint refusal its message names', () => {
    const error = (message: string) =>
      new BundlerError({
        kind: 'rpc',
        chainId: CHAIN,
        method: 'eth_sendUserOperation',
        message,
        code: -32500,
      });
    const cases: [string, string | null, string | null][] = [
      ['AA25 invalid account nonce', 'AA25', 'nonce'],
      ['AA10 sender already constructed', 'AA10', 'deployment'],
      ['AA22 expired or not due', 'AA22', 'validation'],
      ['UserOperation reverted during simulation with reason: AA23 reverted', 'AA23', 'validation'],
      ['AA24 signature error', 'AA24', 'validation'],
      ["AA21 didn't pay prefund", 'AA21', 'prefund'],
      ['AA33 reverted (or OOG)', 'AA33', 'other'],
      ['execution reverted', null, null],
    ];
    for (const [message, aaCode, refusal] of cases) {
      expect(error(message), message).toMatchObject({ aaCode, refusal });
    }
  });
});

describe('the bundler port when the bundler does not answer as it should', () => {
  let server: Server;
  let url: string;
  let respond: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  beforeAll(async () => {
    server = createServer((req, res) => respond(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = () => createJsonRpcBundler({ urls: { [CHAIN]: url }, timeoutMs: 300 });
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => e,
    );

  it('names the chains it has when asked for another', async () => {
    const err = await failure(port().getUserOperationReceipt(8453, `0x${'11'.repeat(32)}`));
    expect(err).toBeInstanceOf(UnknownBundlerChainError);
    expect((err as Error).message).toBe(`No bundler is configured for chain 8453 (configured: ${CHAIN})`);
  });

  it('tells a timeout, an HTTP failure, a JSON-RPC error and an answer of the wrong shape apart', async () => {
    respond = () => undefined; // never answers
    expect(await failure(port().supportedEntryPoints(CHAIN))).toMatchObject({ kind: 'timeout', code: null });

    respond = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    expect(await failure(port().supportedEntryPoints(CHAIN))).toMatchObject({ kind: 'http', code: null });

    respond = (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          error: {
            code: -32500,
            message: "UserOperation reverted during simulation with reason: AA21 didn't pay prefund",
          },
        }),
      );
    };
    expect(await failure(port().supportedEntryPoints(CHAIN))).toMatchObject({
      kind: 'rpc',
      code: -32500,
      aaCode: 'AA21',
      refusal: 'prefund',
      method: 'eth_supportedEntryPoints',
    });

    respond = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { nope: true } }));
    };
    expect(await failure(port().sendUserOperation(CHAIN, {} as never))).toMatchObject({ kind: 'malformed' });
  });

  it('gives up waiting for a receipt at the deadline', async () => {
    const bundler = createJsonRpcBundler({ urls: { [CHAIN]: chain.bundlerUrl! } });
    const hash = `0x${'cd'.repeat(32)}` as const;
    const err = await failure(
      bundler.waitForUserOperationReceipt(CHAIN, hash, { timeoutMs: 300, pollIntervalMs: 50 }),
    );
    expect(err).toBeInstanceOf(UserOperationReceiptTimeoutError);
    expect(err).toMatchObject({ userOpHash: hash, chainId: CHAIN });
  });
});
