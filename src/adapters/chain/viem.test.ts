import {
  encodeFunctionData,
  erc20Abi,
  hashMessage,
  hashTypedData,
  keccak256,
  parseAbi,
  serializeErc6492Signature,
  toHex,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetChain, devnetRpcUrls, startDevnet, type Devnet } from '../../devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../devnet/faucet.ts';
import { NoRelayerError, UnknownChainError, type ChainPort } from './port.ts';
import { createViemChainPort } from './viem.ts';

const CHAIN = 8453;
const factoryAbi = parseAbi(['function createAccount(address owner, uint256 salt) returns (address)']);
const transferAuthAbi = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
]);

let devnet: Devnet;
let port: ChainPort;
let relayerKey: Hex;

beforeAll(async () => {
  devnet = await startDevnet({ chainIds: [CHAIN] });
  relayerKey = (await newFundedAccount(devnet, { chainId: CHAIN, eth: 10n ** 18n })).privateKey;
  port = createViemChainPort({
    rpcUrls: devnetRpcUrls(devnet),
    relayerPrivateKey: relayerKey,
    pollingIntervalMs: 20,
  });
}, 60_000);

afterAll(async () => {
  await devnet?.stop();
});

describe('viem chain port', () => {
  it('reads chain state and token metadata', async () => {
    const { usdc, weth } = devnetChain(devnet, CHAIN).contracts;
    expect(port.chainIds()).toEqual([CHAIN]);
    expect(port.supports(CHAIN)).toBe(true);
    expect(port.supports(1)).toBe(false);
    expect(await port.remoteChainId(CHAIN)).toBe(CHAIN);
    expect(await port.getBlockNumber(CHAIN)).toBeGreaterThan(0n);
    const head = await port.latestBlock(CHAIN);
    expect(head.timestamp).toBeGreaterThan(0n);
    expect(head.hash).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await port.erc20Metadata(CHAIN, usdc)).toEqual({ name: 'USD Coin', symbol: 'USDC', decimals: 6 });
    expect(await port.erc20Metadata(CHAIN, weth)).toEqual({
      name: 'Wrapped Ether',
      symbol: 'WETH',
      decimals: 18,
    });
    const domain = await port.tokenDomain(CHAIN, usdc);
    expect(domain).toMatchObject({ name: 'USD Coin', version: '2', chainId: CHAIN, verifyingContract: usdc });

    expect(await port.isContract(CHAIN, usdc)).toBe(true);
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    expect(await port.isContract(CHAIN, holder)).toBe(false);
    await fundAddress(devnet, {
      chainId: CHAIN,
      address: holder,
      eth: 123n,
      tokens: [{ symbol: 'USDC', amount: 42n }],
    });
    expect(await port.getBalance(CHAIN, holder)).toBe(123n);
    expect(await port.erc20Balance(CHAIN, usdc, holder)).toBe(42n);
    expect(await port.erc20Allowance(CHAIN, usdc, holder, usdc)).toBe(0n);

    expect(() => port.publicClient(1)).toThrow(UnknownChainError);
    await expect(port.getBalance(1, holder)).rejects.toThrow(/Chain 1 is not configured/);
  });

  it('verifies EOA, ERC-1271 and ERC-6492 signatures', async () => {
    const { accountFactory } = devnetChain(devnet, CHAIN).contracts;
    const owner = privateKeyToAccount(generatePrivateKey());
    const hash = hashMessage('hello');
    const sig = await owner.signMessage({ message: 'hello' });
    expect(await port.verifyHash(CHAIN, { signer: owner.address, hash, signature: sig })).toBe(true);
    expect(
      await port.verifyHash(CHAIN, { signer: owner.address, hash: hashMessage('other'), signature: sig }),
    ).toBe(false);

    const factoryData = encodeFunctionData({
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, 1n],
    });
    const { result: account } = await port.publicClient(CHAIN).simulateContract({
      address: accountFactory,
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, 1n],
    });
    const wrapped = serializeErc6492Signature({ address: accountFactory, data: factoryData, signature: sig });
    expect(await port.verifyHash(CHAIN, { signer: account, hash, signature: wrapped })).toBe(true);
    expect(
      await port.verifyHash(CHAIN, { signer: account, hash: hashMessage('other'), signature: wrapped }),
    ).toBe(false);

    // Deploy it through the relayer, then plain ERC-1271.
    const tx = await port.sendTransaction(CHAIN, { to: accountFactory, data: factoryData });
    const receipt = await port.waitForReceipt(CHAIN, tx, { timeoutMs: 10_000 });
    expect(receipt.status).toBe('success');
    expect(receipt.from).toBe(port.relayerAddress()?.toLowerCase());
    expect(await port.isContract(CHAIN, account)).toBe(true);
    expect(await port.verifyHash(CHAIN, { signer: account, hash, signature: sig })).toBe(true);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const strangerSig = await stranger.signMessage({ message: 'hello' });
    expect(await port.verifyHash(CHAIN, { signer: account, hash, signature: strangerSig })).toBe(false);
  });

  it('tracks EIP-3009 authorization state and transaction receipts', async () => {
    const { usdc } = devnetChain(devnet, CHAIN).contracts;
    const payerKey = generatePrivateKey();
    const payer = privateKeyToAccount(payerKey);
    await fundAddress(devnet, {
      chainId: CHAIN,
      address: payer.address,
      tokens: [{ symbol: 'USDC', amount: 1_000_000n }],
    });
    const nonce = keccak256(toHex('port-auth'));
    const message = {
      from: payer.address,
      to: port.relayerAddress()!,
      value: 400_000n,
      validAfter: 0n,
      validBefore: (await port.latestBlock(CHAIN)).timestamp + 600n,
      nonce,
    };
    const typed = {
      domain: { name: 'USD Coin', version: '2', chainId: CHAIN, verifyingContract: usdc },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message,
    } as const;
    const signature = await payer.signTypedData(typed);
    expect(
      await port.verifyHash(CHAIN, { signer: payer.address, hash: hashTypedData(typed), signature }),
    ).toBe(true);
    expect(await port.authorizationState(CHAIN, usdc, payer.address, nonce)).toBe(false);

    const tx = await port.sendTransaction(CHAIN, {
      to: usdc,
      data: encodeFunctionData({
        abi: transferAuthAbi,
        functionName: 'transferWithAuthorization',
        args: [
          message.from,
          message.to,
          message.value,
          message.validAfter,
          message.validBefore,
          nonce,
          signature,
        ],
      }),
    });
    const receipt = await port.waitForReceipt(CHAIN, tx);
    expect(receipt.status).toBe('success');
    expect(receipt.logs.length).toBeGreaterThan(0);
    expect(await port.getReceipt(CHAIN, tx)).toEqual(receipt);
    expect(await port.getReceipt(CHAIN, keccak256(toHex('no such tx')))).toBeNull();
    expect(await port.authorizationState(CHAIN, usdc, payer.address, nonce)).toBe(true);
    expect(await port.erc20Balance(CHAIN, usdc, message.to)).toBe(400_000n);
    expect(await port.erc20Balance(CHAIN, usdc, payer.address)).toBe(600_000n);
  });

  it('sends concurrent transactions from the relayer without nonce clashes', async () => {
    const { usdc } = devnetChain(devnet, CHAIN).contracts;
    const mint = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hashes = await Promise.all(
      [1n, 2n, 3n, 4n].map((amount) =>
        port.sendTransaction(CHAIN, {
          to: usdc,
          data: encodeFunctionData({ abi: mint, functionName: 'mint', args: [to, amount] }),
        }),
      ),
    );
    const receipts = await Promise.all(hashes.map((h) => port.waitForReceipt(CHAIN, h)));
    expect(receipts.every((r) => r.status === 'success')).toBe(true);
    expect(await port.erc20Balance(CHAIN, usdc, to)).toBe(10n);
    expect(
      await port
        .publicClient(CHAIN)
        .readContract({ address: usdc, abi: erc20Abi, functionName: 'totalSupply' }),
    ).toBeGreaterThan(0n);
  });

  it('refuses writes without a relayer key', async () => {
    const readOnly = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    expect(readOnly.relayerAddress()).toBeNull();
    await expect(
      readOnly.sendTransaction(CHAIN, { to: devnetChain(devnet, CHAIN).contracts.usdc }),
    ).rejects.toThrow(NoRelayerError);
  });
});
