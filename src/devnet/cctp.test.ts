// Circle CCTP V2 on the devnet, as a user of it meets it: a burn on Base with TokenMessengerV2's
// depositForBurn, the attestation from the Iris fake, and receiveMessage on Polygon minting the
// USDC (and the reverse corridor). Runs on the shared test devnet with fresh keys; the tests that
// turn knobs or hold messages start an Iris fake of their own over the same chains.

import {
  concat,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  http,
  keccak256,
  pad,
  parseAbi,
  recoverAddress,
  size,
  slice,
  toFunctionSelector,
  toHex,
  zeroAddress,
  zeroHash,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  BASE_CHAIN_ID,
  DEVNET_CCTP_ATTESTER,
  DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
  DEVNET_CCTP_DOMAINS,
  DEVNET_DEPLOYER,
  expectedDevnetContracts,
  POLYGON_CHAIN_ID,
  type DevnetChain,
} from './devnet.ts';
import { fundAddress, newFundedAccount } from './faucet.ts';
import {
  fastTransferFee,
  IRIS_NOT_FOUND_BODY,
  startIrisFake,
  type IrisFake,
  type IrisFakeOptions,
  type IrisMessage,
} from './fakes/iris.ts';

const devnet = inject('devnet');
const base = devnet.chains[BASE_CHAIN_ID]!;
const polygon = devnet.chains[POLYGON_CHAIN_ID]!;
const BASE_DOMAIN = 6;
const POLYGON_DOMAIN = 7;

const messengerAbi = parseAbi([
  'function depositForBurn(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold)',
  'function depositForBurnWithHook(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold, bytes hookData)',
  'function handleReceiveFinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32 finalityThresholdExecuted, bytes messageBody) returns (bool)',
  'function remoteTokenMessengers(uint32 domain) view returns (bytes32)',
  'function localMessageTransmitter() view returns (address)',
  'function feeRecipient() view returns (address)',
  'function minFee() view returns (uint256)',
  'function messageBodyVersion() view returns (uint32)',
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
  'event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected)',
]);
const transmitterAbi = parseAbi([
  'function receiveMessage(bytes message, bytes attestation) returns (bool success)',
  'function sendMessage(uint32 destinationDomain, bytes32 recipient, bytes32 destinationCaller, uint32 minFinalityThreshold, bytes messageBody)',
  'function localDomain() view returns (uint32)',
  'function version() view returns (uint32)',
  'function usedNonces(bytes32) view returns (uint256)',
  'function signatureThreshold() view returns (uint256)',
  'function isEnabledAttester(address) view returns (bool)',
  'function getNumEnabledAttesters() view returns (uint256)',
  'event MessageSent(bytes message)',
  'event MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, bytes messageBody)',
]);
const accountFactoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);
const accountAbi = parseAbi(['function execute(bytes32 mode, bytes executionCalldata) payable']);
const usdcAbi = parseAbi([
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function burn(uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Burn(address indexed burner, uint256 amount)',
]);

function clients(chain: DevnetChain, privateKey: Hex) {
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl);
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const account = privateKeyToAccount(privateKey);
  const wallet = createWalletClient({ account, chain: viemChain, transport });
  return { publicClient, wallet, account };
}

async function mined(chain: DevnetChain, hash: Hex): Promise<TransactionReceipt> {
  const { publicClient } = clients(chain, generatePrivateKey());
  const receipt = await publicClient.waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
    timeout: 30_000,
  });
  expect(receipt.status).toBe('success');
  return receipt;
}

const other = (chain: DevnetChain) => (chain.chainId === BASE_CHAIN_ID ? polygon : base);

interface Burn {
  receipt: TransactionReceipt;
  depositor: Address;
  mintRecipient: Address;
  amount: bigint;
  maxFee: bigint;
}

/** A fresh key with `amount` USDC on `from` approves the messenger and burns it for a fresh recipient on the other chain. */
async function burn(
  from: DevnetChain,
  opts: {
    amount: bigint;
    maxFee: bigint;
    minFinalityThreshold: number;
    destinationCaller?: Address;
    hookData?: Hex;
  },
): Promise<Burn> {
  const funded = await newFundedAccount(devnet, {
    chainId: from.chainId,
    tokens: [{ symbol: 'USDC', amount: opts.amount }],
  });
  const { wallet } = clients(from, funded.privateKey);
  const messenger = from.contracts.cctpTokenMessenger!;
  await mined(
    from,
    await wallet.writeContract({
      address: from.contracts.usdc,
      abi: usdcAbi,
      functionName: 'approve',
      args: [messenger, opts.amount],
    }),
  );
  const mintRecipient = privateKeyToAccount(generatePrivateKey()).address;
  const common = [
    opts.amount,
    DEVNET_CCTP_DOMAINS[other(from).chainId]!,
    pad(mintRecipient),
    from.contracts.usdc,
    opts.destinationCaller ? pad(opts.destinationCaller) : zeroHash,
    opts.maxFee,
    opts.minFinalityThreshold,
  ] as const;
  const hash = opts.hookData
    ? await wallet.writeContract({
        address: messenger,
        abi: messengerAbi,
        functionName: 'depositForBurnWithHook',
        args: [...common, opts.hookData],
      })
    : await wallet.writeContract({
        address: messenger,
        abi: messengerAbi,
        functionName: 'depositForBurn',
        args: common,
      });
  return { receipt: await mined(from, hash), depositor: funded.address, mintRecipient, ...opts };
}

async function irisGet(url: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers };
}

const messagesUrl = (irisUrl: string, domain: number, txHash: Hex) =>
  `${irisUrl}/v2/messages/${domain}?transactionHash=${txHash}`;

/** Polls Iris until every message of the burn is complete (the devnet's Iris attests at once). */
async function attested(irisUrl: string, domain: number, txHash: Hex): Promise<IrisMessage[]> {
  for (let i = 0; i < 200; i++) {
    const { status, body } = await irisGet(messagesUrl(irisUrl, domain, txHash));
    if (status === 200) {
      const messages = (body as { messages: IrisMessage[] }).messages;
      if (messages.every((m) => m.status === 'complete')) return messages;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`No attestation for ${txHash}`);
}

/** A fresh key on `chain` (with gas) sends receiveMessage; resolves with the receipt. */
async function receive(chain: DevnetChain, message: Hex, attestation: Hex, relayerKey?: Hex) {
  const key = relayerKey ?? (await newFundedAccount(devnet, { chainId: chain.chainId })).privateKey;
  const { wallet } = clients(chain, key);
  const hash = await wallet.writeContract({
    address: chain.contracts.cctpMessageTransmitter!,
    abi: transmitterAbi,
    functionName: 'receiveMessage',
    args: [message, attestation],
    gas: 500_000n,
  });
  return mined(chain, hash);
}

/** What receiveMessage would do from `caller` (a revert rejects with its reason). */
async function simulateReceive(chain: DevnetChain, message: Hex, attestation: Hex, caller?: Address) {
  const { publicClient } = clients(chain, generatePrivateKey());
  return publicClient.simulateContract({
    address: chain.contracts.cctpMessageTransmitter!,
    abi: transmitterAbi,
    functionName: 'receiveMessage',
    args: [message, attestation],
    account: caller ?? privateKeyToAccount(generatePrivateKey()).address,
  });
}

function irisChains(): IrisFakeOptions['chains'] {
  return {
    [BASE_CHAIN_ID]: {
      rpcUrl: base.rpcUrl,
      domain: BASE_DOMAIN,
      messageTransmitter: base.contracts.cctpMessageTransmitter!,
      tokenMessenger: base.contracts.cctpTokenMessenger!,
    },
    [POLYGON_CHAIN_ID]: {
      rpcUrl: polygon.rpcUrl,
      domain: POLYGON_DOMAIN,
      messageTransmitter: polygon.contracts.cctpMessageTransmitter!,
      tokenMessenger: polygon.contracts.cctpTokenMessenger!,
    },
  };
}

const ownFakes: IrisFake[] = [];
async function ownIris(options: Partial<IrisFakeOptions> = {}): Promise<IrisFake> {
  const fake = await startIrisFake({
    chains: irisChains(),
    attesterPrivateKey: DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
    ...options,
  });
  ownFakes.push(fake);
  return fake;
}

afterAll(async () => {
  await Promise.all(ownFakes.map((f) => f.stop()));
});

describe('CCTP V2 contracts on the devnet', () => {
  it('sit where the plan puts them, linked to each other, with Circle’s selectors and constants', async () => {
    expect(DEVNET_CCTP_DOMAINS).toEqual({ [BASE_CHAIN_ID]: 6, [POLYGON_CHAIN_ID]: 7 });
    expect(DEVNET_CCTP_ATTESTER).toBe(privateKeyToAccount(DEVNET_CCTP_ATTESTER_PRIVATE_KEY).address);
    expect(devnet.attestation).toEqual({
      irisBaseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      attester: DEVNET_CCTP_ATTESTER,
      domains: { [BASE_CHAIN_ID]: 6, [POLYGON_CHAIN_ID]: 7 },
    });
    expect(devnet.chains[84532]!.contracts.cctpTokenMessenger).toBeUndefined();

    expect(toFunctionSelector(messengerAbi[0])).toBe('0x8e0250ee');
    expect(toFunctionSelector(messengerAbi[1])).toBe('0x779b432d');
    expect(toFunctionSelector(transmitterAbi[0])).toBe('0x57ecfd28');

    for (const chain of [base, polygon]) {
      const { publicClient } = clients(chain, generatePrivateKey());
      const expected = expectedDevnetContracts(chain.chainId);
      const remote = expectedDevnetContracts(other(chain).chainId);
      const transmitter = chain.contracts.cctpMessageTransmitter!;
      const messenger = chain.contracts.cctpTokenMessenger!;
      expect(transmitter).toBe(expected.cctpMessageTransmitter);
      expect(messenger).toBe(expected.cctpTokenMessenger);
      const t = <F extends 'localDomain' | 'version' | 'signatureThreshold' | 'getNumEnabledAttesters'>(
        functionName: F,
      ) => publicClient.readContract({ address: transmitter, abi: transmitterAbi, functionName });
      expect(await t('localDomain')).toBe(DEVNET_CCTP_DOMAINS[chain.chainId]);
      expect(await t('version')).toBe(1);
      expect(await t('signatureThreshold')).toBe(1n);
      expect(await t('getNumEnabledAttesters')).toBe(1n);
      for (const [who, enabled] of [
        [DEVNET_CCTP_ATTESTER, true],
        [DEVNET_DEPLOYER, false],
      ] as const) {
        expect(
          await publicClient.readContract({
            address: transmitter,
            abi: transmitterAbi,
            functionName: 'isEnabledAttester',
            args: [who],
          }),
        ).toBe(enabled);
      }
      const m = <F extends 'localMessageTransmitter' | 'feeRecipient' | 'minFee' | 'messageBodyVersion'>(
        functionName: F,
      ) => publicClient.readContract({ address: messenger, abi: messengerAbi, functionName });
      expect(await m('localMessageTransmitter')).toBe(transmitter);
      expect(await m('feeRecipient')).toBe(DEVNET_DEPLOYER);
      expect(await m('minFee')).toBe(0n);
      expect(await m('messageBodyVersion')).toBe(1);
      const remoteMessenger = (domain: number) =>
        publicClient.readContract({
          address: messenger,
          abi: messengerAbi,
          functionName: 'remoteTokenMessengers',
          args: [domain],
        });
      expect(await remoteMessenger(DEVNET_CCTP_DOMAINS[other(chain).chainId]!)).toBe(
        pad(remote.cctpTokenMessenger!).toLowerCase(),
      );
      expect(await remoteMessenger(0)).toBe(zeroHash);
    }
  });

  it('depositForBurn on Base burns the USDC and emits DepositForBurn and MessageSent in Circle’s layout', async () => {
    const amount = 2_500_000n;
    const maxFee = 300n;
    const b = await burn(base, { amount, maxFee, minFinalityThreshold: 1000 });
    const { publicClient } = clients(base, generatePrivateKey());
    const usdc = base.contracts.usdc;
    const messenger = base.contracts.cctpTokenMessenger!;
    const block = b.receipt.blockNumber;

    // The depositor has nothing left, and the supply fell by the amount in the burn's block.
    const read = (functionName: 'totalSupply', blockNumber: bigint) =>
      publicClient.readContract({ address: usdc, abi: usdcAbi, functionName, blockNumber });
    expect(await read('totalSupply', block - 1n)).toBe((await read('totalSupply', block)) + amount);
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'balanceOf',
        args: [b.depositor],
      }),
    ).toBe(0n);
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'balanceOf',
        args: [messenger],
      }),
    ).toBe(0n);

    const events = b.receipt.logs.flatMap((log) => {
      for (const abi of [usdcAbi, messengerAbi, transmitterAbi]) {
        try {
          return [{ address: log.address, ...decodeEventLog({ abi, data: log.data, topics: log.topics }) }];
        } catch {
          // another contract's event
        }
      }
      return [];
    });
    expect(events.map((e) => e.eventName)).toEqual([
      'Transfer',
      'Burn',
      'Transfer',
      'MessageSent',
      'DepositForBurn',
    ]);
    expect(events[1]).toMatchObject({ address: usdc.toLowerCase(), args: { burner: messenger, amount } });
    expect(events[2]).toMatchObject({ args: { from: messenger, to: zeroAddress, value: amount } });

    const deposit = events[4]!;
    expect(deposit.address).toBe(messenger.toLowerCase());
    expect(deposit.args).toEqual({
      burnToken: usdc,
      amount,
      depositor: b.depositor,
      mintRecipient: pad(b.mintRecipient).toLowerCase(),
      destinationDomain: POLYGON_DOMAIN,
      destinationTokenMessenger: pad(polygon.contracts.cctpTokenMessenger!).toLowerCase(),
      destinationCaller: zeroHash,
      maxFee,
      minFinalityThreshold: 1000,
      hookData: '0x',
    });

    // MessageV2 with a BurnMessageV2 body, packed, Iris's fields still empty.
    const sent = events[3]!;
    expect(sent.address).toBe(base.contracts.cctpMessageTransmitter!.toLowerCase());
    const message = (sent.args as { message: Hex }).message;
    const body = encodePacked(
      ['uint32', 'bytes32', 'bytes32', 'uint256', 'bytes32', 'uint256', 'uint256', 'uint256'],
      [1, pad(usdc), pad(b.mintRecipient), amount, pad(b.depositor), maxFee, 0n, 0n],
    );
    expect(message).toBe(
      encodePacked(
        [
          'uint32',
          'uint32',
          'uint32',
          'bytes32',
          'bytes32',
          'bytes32',
          'bytes32',
          'uint32',
          'uint32',
          'bytes',
        ],
        [
          1,
          BASE_DOMAIN,
          POLYGON_DOMAIN,
          zeroHash,
          pad(messenger),
          pad(polygon.contracts.cctpTokenMessenger!),
          zeroHash,
          1000,
          0,
          body,
        ],
      ).toLowerCase(),
    );
    expect(size(message)).toBe(148 + 228);
    expect(slice(message, 148 + 4, 148 + 36)).toBe(pad(usdc).toLowerCase());
  });

  it('Iris answers 404 for an unknown burn, then the filled message signed by the attester; Polygon mints amount minus the fast fee', async () => {
    const iris = devnet.attestation!.irisBaseUrl;
    const unknown = keccak256(toHex('no such transaction'));
    expect(await irisGet(messagesUrl(iris, BASE_DOMAIN, unknown))).toMatchObject({
      status: 404,
      body: IRIS_NOT_FOUND_BODY,
    });

    const amount = 10_000_000n; // 10 USDC: the 1 bp fast fee is 1,000 units
    const b = await burn(base, { amount, maxFee: 5_000n, minFinalityThreshold: 1000 });
    const txHash = b.receipt.transactionHash;
    // Asked on the wrong domain, the burn is not found.
    expect((await irisGet(messagesUrl(iris, POLYGON_DOMAIN, txHash))).status).toBe(404);

    const [m, ...rest] = await attested(iris, BASE_DOMAIN, txHash);
    expect(rest).toEqual([]);
    const fee = fastTransferFee(amount, 1);
    expect(fee).toBe(1_000n);
    expect(m!.cctpVersion).toBe(2);
    expect(m!.status).toBe('complete');
    expect(await recoverAddress({ hash: keccak256(m!.message), signature: m!.attestation as Hex })).toBe(
      DEVNET_CCTP_ATTESTER,
    );
    expect(size(m!.attestation as Hex)).toBe(65);
    expect(slice(m!.message, 12, 44)).toBe(m!.eventNonce);
    expect(m!.eventNonce).not.toBe(zeroHash);
    const decoded = m!.decodedMessage;
    expect(decoded).toMatchObject({
      sourceDomain: '6',
      destinationDomain: '7',
      nonce: m!.eventNonce,
      sender: base.contracts.cctpTokenMessenger,
      recipient: polygon.contracts.cctpTokenMessenger,
      destinationCaller: zeroAddress,
      minFinalityThreshold: '1000',
      finalityThresholdExecuted: '1000',
      decodedMessageBody: {
        burnToken: base.contracts.usdc,
        mintRecipient: b.mintRecipient,
        amount: amount.toString(),
        messageSender: b.depositor,
        maxFee: '5000',
        feeExecuted: fee.toString(),
        hookData: '0x',
      },
    });
    const { publicClient: polygonClient } = clients(polygon, generatePrivateKey());
    const head = await polygonClient.getBlockNumber();
    const expiration = BigInt(decoded.decodedMessageBody!.expirationBlock);
    expect(expiration).toBeGreaterThan(head);
    expect(expiration).toBeLessThanOrEqual(head + 7200n);

    // Asking again returns the very same bytes; asking by nonce finds the same message.
    const again = await irisGet(messagesUrl(iris, BASE_DOMAIN, txHash));
    expect((again.body as { messages: IrisMessage[] }).messages).toEqual([m]);
    const byNonce = await irisGet(`${iris}/v2/messages/${BASE_DOMAIN}?nonce=${m!.eventNonce}`);
    expect(byNonce).toMatchObject({ status: 200, body: { messages: [m] } });

    const received = await receive(polygon, m!.message, m!.attestation as Hex);
    const mints = received.logs.flatMap((log) => {
      try {
        const e = decodeEventLog({ abi: usdcAbi, data: log.data, topics: log.topics });
        return e.eventName === 'Transfer' ? [{ token: getAddress(log.address), ...e.args }] : [];
      } catch {
        return [];
      }
    });
    expect(mints).toEqual([
      { token: polygon.contracts.usdc, from: zeroAddress, to: b.mintRecipient, value: amount - fee },
      { token: polygon.contracts.usdc, from: zeroAddress, to: DEVNET_DEPLOYER, value: fee },
    ]);
    const withdraw = received.logs
      .filter((l) => getAddress(l.address) === polygon.contracts.cctpTokenMessenger)
      .map((l) => decodeEventLog({ abi: messengerAbi, data: l.data, topics: l.topics }));
    expect(withdraw).toEqual([
      {
        eventName: 'MintAndWithdraw',
        args: {
          mintRecipient: b.mintRecipient,
          amount: amount - fee,
          mintToken: polygon.contracts.usdc,
          feeCollected: fee,
        },
      },
    ]);
    const receivedEvent = received.logs
      .filter((l) => getAddress(l.address) === polygon.contracts.cctpMessageTransmitter)
      .map((l) => decodeEventLog({ abi: transmitterAbi, data: l.data, topics: l.topics }));
    expect(receivedEvent).toMatchObject([
      {
        eventName: 'MessageReceived',
        args: { sourceDomain: BASE_DOMAIN, nonce: m!.eventNonce, finalityThresholdExecuted: 1000 },
      },
    ]);
    expect(
      await polygonClient.readContract({
        address: polygon.contracts.usdc,
        abi: usdcAbi,
        functionName: 'balanceOf',
        args: [b.mintRecipient],
      }),
    ).toBe(amount - fee);
    expect(
      await polygonClient.readContract({
        address: polygon.contracts.cctpMessageTransmitter!,
        abi: transmitterAbi,
        functionName: 'usedNonces',
        args: [m!.eventNonce],
      }),
    ).toBe(1n);

    // The same message again: the nonce is used.
    await expect(simulateReceive(polygon, m!.message, m!.attestation as Hex)).rejects.toThrow(
      /Nonce already used/,
    );
  });

  it('a standard transfer (finality 2000, no fee) mints the full amount, Polygon → Base too', async () => {
    const iris = devnet.attestation!.irisBaseUrl;
    const amount = 3_000_000n;
    const b = await burn(polygon, { amount, maxFee: 0n, minFinalityThreshold: 2000 });
    const [m] = await attested(iris, POLYGON_DOMAIN, b.receipt.transactionHash);
    expect(m!.decodedMessage).toMatchObject({
      sourceDomain: '7',
      destinationDomain: '6',
      finalityThresholdExecuted: '2000',
      decodedMessageBody: { feeExecuted: '0', burnToken: polygon.contracts.usdc },
    });
    const received = await receive(base, m!.message, m!.attestation as Hex);
    const withdraw = received.logs
      .filter((l) => getAddress(l.address) === base.contracts.cctpTokenMessenger)
      .map((l) => decodeEventLog({ abi: messengerAbi, data: l.data, topics: l.topics }).args);
    expect(withdraw).toEqual([
      { mintRecipient: b.mintRecipient, amount, mintToken: base.contracts.usdc, feeCollected: 0n },
    ]);
    const { publicClient } = clients(base, generatePrivateKey());
    expect(
      await publicClient.readContract({
        address: base.contracts.usdc,
        abi: usdcAbi,
        functionName: 'balanceOf',
        args: [b.mintRecipient],
      }),
    ).toBe(amount);
  });

  it('a fast transfer whose maxFee is below the fee waits as standard (insufficient_fee) and is attested free', async () => {
    const iris = await ownIris({ fastFeeBps: 10 });
    const amount = 1_000_000n; // 10 bp: 1,000 units; maxFee 999 is short by one
    const b = await burn(base, { amount, maxFee: 999n, minFinalityThreshold: 1000 });
    const txHash = b.receipt.transactionHash;
    iris.hold(txHash);
    const pending = await irisGet(messagesUrl(iris.url, BASE_DOMAIN, txHash));
    expect(pending.status).toBe(200);
    const [p] = (pending.body as { messages: IrisMessage[] }).messages;
    expect(p).toMatchObject({
      status: 'pending_confirmations',
      attestation: 'PENDING',
      delayReason: 'insufficient_fee',
      cctpVersion: 2,
      decodedMessage: { nonce: zeroHash, finalityThresholdExecuted: '0' },
    });
    // Pending: the message as emitted.
    const { publicClient } = clients(base, generatePrivateKey());
    const sent = (await publicClient.getTransactionReceipt({ hash: txHash })).logs.find(
      (l) => getAddress(l.address) === base.contracts.cctpMessageTransmitter,
    )!;
    const emitted = decodeEventLog({ abi: transmitterAbi, data: sent.data, topics: sent.topics });
    expect(emitted.eventName).toBe('MessageSent');
    expect(p!.message).toBe((emitted.args as { message: Hex }).message);

    iris.release(txHash);
    const [m] = await attested(iris.url, BASE_DOMAIN, txHash);
    expect(m!.decodedMessage).toMatchObject({
      finalityThresholdExecuted: '2000',
      decodedMessageBody: { feeExecuted: '0', maxFee: '999' },
    });
    expect(m).not.toHaveProperty('delayReason');
    const received = await receive(polygon, m!.message, m!.attestation as Hex);
    expect(received.status).toBe('success');
  });

  it('holds a burn pending for delayMs and the confirmations it asks for', async () => {
    const iris = await ownIris({ delayMs: 60_000, confirmations: { fast: 1, standard: 3 } });
    const b = await burn(base, { amount: 1_000_000n, maxFee: 0n, minFinalityThreshold: 2000 });
    const txHash = b.receipt.transactionHash;
    const status = async () =>
      ((await irisGet(messagesUrl(iris.url, BASE_DOMAIN, txHash))).body as { messages: IrisMessage[] })
        .messages[0]!.status;
    expect(await status()).toBe('pending_confirmations');
    iris.knobs.pendingStatus = 'pending';
    expect(await status()).toBe('pending');
    iris.knobs.delayMs = 0;
    // Three confirmations for a standard transfer: two more blocks on Base after the burn's.
    const funded = await newFundedAccount(devnet, { chainId: BASE_CHAIN_ID });
    const { wallet } = clients(base, funded.privateKey);
    for (let i = 0; i < 2; i++) {
      await mined(base, await wallet.sendTransaction({ to: funded.address, value: 0n }));
    }
    expect(await status()).toBe('complete');
  });

  it('refuses tampered messages, other keys’ signatures, a wrong destinationCaller and an expired message', async () => {
    const relayer = await newFundedAccount(devnet, { chainId: POLYGON_CHAIN_ID });
    const b = await burn(base, {
      amount: 2_000_000n,
      maxFee: 0n,
      minFinalityThreshold: 2000,
      destinationCaller: relayer.address,
    });
    const [m] = await attested(devnet.attestation!.irisBaseUrl, BASE_DOMAIN, b.receipt.transactionHash);
    const message = m!.message;
    const attestation = m!.attestation as Hex;

    // The amount raised by one: the signature no longer recovers to the attester.
    const amountAt = 148 + 68;
    const tampered = concat([
      slice(message, 0, amountAt),
      toHex(BigInt(slice(message, amountAt, amountAt + 32)) + 1n, { size: 32 }),
      slice(message, amountAt + 32),
    ]);
    await expect(simulateReceive(polygon, tampered, attestation, relayer.address)).rejects.toThrow(
      /Invalid signature: not attester/,
    );
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expect(
      simulateReceive(polygon, message, await stranger.sign({ hash: keccak256(message) }), relayer.address),
    ).rejects.toThrow(/Invalid signature: not attester/);
    // Signed with the Ethereum signed-message prefix: not what the transmitter verifies.
    const attesterAccount = privateKeyToAccount(DEVNET_CCTP_ATTESTER_PRIVATE_KEY);
    await expect(
      simulateReceive(
        polygon,
        message,
        await attesterAccount.signMessage({ message: { raw: keccak256(message) } }),
        relayer.address,
      ),
    ).rejects.toThrow(/Invalid signature: not attester/);
    await expect(
      simulateReceive(polygon, message, slice(attestation, 0, 64), relayer.address),
    ).rejects.toThrow(/Invalid attestation length/);
    // Delivered to Base (the source) instead: wrong destination domain.
    await expect(simulateReceive(base, message, attestation, relayer.address)).rejects.toThrow(
      /Invalid destination domain/,
    );
    // Only the destinationCaller may receive it.
    await expect(simulateReceive(polygon, message, attestation)).rejects.toThrow(
      /Invalid caller for message/,
    );
    await receive(polygon, message, attestation, relayer.privateKey);

    // A message attested with expirationBlock at the destination's current block is expired on arrival.
    const iris = await ownIris({ expirationBlocks: 0 });
    const late = await burn(base, { amount: 1_000_000n, maxFee: 0n, minFinalityThreshold: 2000 });
    const [e] = await attested(iris.url, BASE_DOMAIN, late.receipt.transactionHash);
    await expect(simulateReceive(polygon, e!.message, e!.attestation as Hex)).rejects.toThrow(
      /Message expired and must be re-signed/,
    );
  });

  it('depositForBurn checks its arguments; depositForBurnWithHook carries the hook data', async () => {
    const funded = await newFundedAccount(devnet, {
      chainId: BASE_CHAIN_ID,
      tokens: [
        { symbol: 'USDC', amount: 1_000_000n },
        { symbol: 'EURC', amount: 1_000_000n },
      ],
    });
    const { publicClient } = clients(base, funded.privateKey);
    const recipient = pad(privateKeyToAccount(generatePrivateKey()).address);
    const simulate = (args: readonly [bigint, number, Hex, Address, Hex, bigint, number]) =>
      publicClient.simulateContract({
        address: base.contracts.cctpTokenMessenger!,
        abi: messengerAbi,
        functionName: 'depositForBurn',
        args,
        account: funded.address,
      });
    const usdc = base.contracts.usdc;
    await expect(simulate([0n, 7, recipient, usdc, zeroHash, 0n, 2000])).rejects.toThrow(
      /Amount must be nonzero/,
    );
    await expect(simulate([10n, 7, zeroHash, usdc, zeroHash, 0n, 2000])).rejects.toThrow(
      /Mint recipient must be nonzero/,
    );
    await expect(simulate([10n, 7, recipient, usdc, zeroHash, 10n, 2000])).rejects.toThrow(
      /Max fee must be less than amount/,
    );
    await expect(simulate([10n, 0, recipient, usdc, zeroHash, 0n, 2000])).rejects.toThrow(
      /No TokenMessenger for domain/,
    );
    await expect(simulate([10n, 7, recipient, base.contracts.eurc!, zeroHash, 0n, 2000])).rejects.toThrow(
      /Burn token not supported/,
    );
    // Without an approval the transfer into the messenger fails.
    await expect(simulate([10n, 7, recipient, usdc, zeroHash, 0n, 2000])).rejects.toThrow(
      /exceeds allowance/,
    );
    await expect(
      publicClient.simulateContract({
        address: base.contracts.cctpTokenMessenger!,
        abi: messengerAbi,
        functionName: 'depositForBurnWithHook',
        args: [10n, 7, recipient, usdc, zeroHash, 0n, 2000, '0x'],
        account: funded.address,
      }),
    ).rejects.toThrow(/Hook data is empty/);

    // Only the transmitter may hand the messenger a message.
    await expect(
      publicClient.simulateContract({
        address: polygon.contracts.cctpTokenMessenger!,
        abi: messengerAbi,
        functionName: 'handleReceiveFinalizedMessage',
        args: [BASE_DOMAIN, pad(base.contracts.cctpTokenMessenger!), 2000, '0x'],
        account: funded.address,
      }),
    ).rejects.toThrow();

    const hookData = toHex('call me on arrival');
    const b = await burn(base, { amount: 1_500_000n, maxFee: 0n, minFinalityThreshold: 2000, hookData });
    const [m] = await attested(devnet.attestation!.irisBaseUrl, BASE_DOMAIN, b.receipt.transactionHash);
    expect(m!.decodedMessage.decodedMessageBody!.hookData).toBe(hookData);
    expect(slice(m!.message, 148 + 228)).toBe(hookData);
    const received = await receive(polygon, m!.message, m!.attestation as Hex);
    expect(received.status).toBe('success');
  });

  it('gives each message of a transaction its own entry and nonce, in log order (two burns and a plain message)', async () => {
    // One transaction from a DevAccount batch: approve, two burns, and a message that is no burn.
    const owner = await newFundedAccount(devnet, { chainId: BASE_CHAIN_ID });
    const { publicClient, wallet } = clients(base, owner.privateKey);
    const factory = base.contracts.accountFactory;
    const account = await publicClient.readContract({
      address: factory,
      abi: accountFactoryAbi,
      functionName: 'getAddress',
      args: [owner.address, 7n],
    });
    await mined(
      base,
      await wallet.writeContract({
        address: factory,
        abi: accountFactoryAbi,
        functionName: 'createAccount',
        args: [owner.address, 7n],
      }),
    );
    await fundAddress(devnet, {
      chainId: BASE_CHAIN_ID,
      address: account,
      tokens: [{ symbol: 'USDC', amount: 3_000_000n }],
    });
    const messenger = base.contracts.cctpTokenMessenger!;
    const recipients = [0, 1].map(() => privateKeyToAccount(generatePrivateKey()).address);
    const deposit = (to: Address, amount: bigint) =>
      encodeFunctionData({
        abi: messengerAbi,
        functionName: 'depositForBurn',
        args: [amount, POLYGON_DOMAIN, pad(to), base.contracts.usdc, zeroHash, 0n, 2000],
      });
    const plainBody = toHex('not a burn');
    const calls: [Address, bigint, Hex][] = [
      [
        base.contracts.usdc,
        0n,
        encodeFunctionData({ abi: usdcAbi, functionName: 'approve', args: [messenger, 3_000_000n] }),
      ],
      [messenger, 0n, deposit(recipients[0]!, 1_000_000n)],
      [messenger, 0n, deposit(recipients[1]!, 2_000_000n)],
      [
        base.contracts.cctpMessageTransmitter!,
        0n,
        encodeFunctionData({
          abi: transmitterAbi,
          functionName: 'sendMessage',
          args: [POLYGON_DOMAIN, pad(owner.address), zeroHash, 2000, plainBody],
        }),
      ],
    ];
    const receipt = await mined(
      base,
      await wallet.writeContract({
        address: account,
        abi: accountAbi,
        functionName: 'execute',
        args: [
          pad('0x01', { dir: 'right', size: 32 }),
          encodeAbiParameters(
            [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
            [calls],
          ),
        ],
      }),
    );
    const messages = await attested(devnet.attestation!.irisBaseUrl, BASE_DOMAIN, receipt.transactionHash);
    expect(messages.map((m) => m.decodedMessage.decodedMessageBody?.mintRecipient ?? null)).toEqual([
      ...recipients,
      null,
    ]);
    expect(messages.map((m) => m.decodedMessage.decodedMessageBody?.messageSender ?? null)).toEqual([
      account,
      account,
      null,
    ]);
    expect(new Set(messages.map((m) => m.eventNonce)).size).toBe(3);
    const plain = messages[2]!;
    expect(plain.decodedMessage).toMatchObject({
      sender: account,
      messageBody: plainBody,
      finalityThresholdExecuted: '2000',
    });
    expect(size(plain.message)).toBe(148 + size(plainBody));

    // The two burns mint on Polygon; the plain message's recipient is no message handler.
    for (const m of messages.slice(0, 2)) {
      expect((await receive(polygon, m.message, m.attestation as Hex)).status).toBe('success');
    }
    await expect(simulateReceive(polygon, plain.message, plain.attestation as Hex)).rejects.toThrow();
  });
});

describe('the Iris fake', () => {
  it('answers the fee table, 429 when forced or over its rate, 5xx when told, and 400 for bad queries', async () => {
    const iris = await ownIris({ fastFeeBps: 1.3 });
    expect(await irisGet(`${iris.url}/v2/burn/USDC/fees/6/7`)).toMatchObject({
      status: 200,
      body: [
        { finalityThreshold: 1000, minimumFee: 1.3 },
        { finalityThreshold: 2000, minimumFee: 0 },
      ],
    });
    expect((await irisGet(`${iris.url}/v2/burn/USDC/fees/6/6`)).status).toBe(400);
    expect((await irisGet(`${iris.url}/v2/messages/6`)).status).toBe(400);
    expect((await irisGet(`${iris.url}/v2/messages/6?transactionHash=0x1234`)).status).toBe(400);
    expect(fastTransferFee(1_000_000n, 1.3)).toBe(130n);
    expect(fastTransferFee(1n, 1)).toBe(1n);

    iris.knobs.rateLimitRetryAfter = '300';
    const limited = await irisGet(`${iris.url}/v2/burn/USDC/fees/6/7`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('300');
    iris.knobs.rateLimitRetryAfter = null;

    iris.knobs.serverError = 503;
    expect((await irisGet(`${iris.url}/v2/burn/USDC/fees/6/7`)).status).toBe(503);
    iris.knobs.serverError = null;

    iris.knobs.requestsPerSecond = 3;
    iris.knobs.rateLimitBlockMs = 60_000;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await irisGet(`${iris.url}/v2/burn/USDC/fees/6/7`)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    iris.reset();
    expect((await irisGet(`${iris.url}/v2/burn/USDC/fees/6/7`)).status).toBe(200);
    expect(iris.requests.length).toBeGreaterThan(0);
  });
});
