import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  getContractAddress,
  hashDomain,
  hashTypedData,
  http,
  keccak256,
  pad,
  parseAbi,
  parseSignature,
  serializeErc6492Signature,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifact, compileSources, DEVNET_DIR, loadArtifacts } from '../../devnet/compile.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  devnetChain,
  devnetRpcUrls,
  devnetTokenAddresses,
  ENTRY_POINT_V07,
  expectedDevnetContracts,
  startDevnet,
  type Devnet,
} from './devnet.ts';
import { fundAddress, newFundedAccount } from './faucet.ts';

const usdcAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function version() view returns (string)',
  'function balanceOf(address) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)',
  'function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)',
  'function CANCEL_AUTHORIZATION_TYPEHASH() view returns (bytes32)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);
const factoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);
const accountAbi = parseAbi([
  'function owner() view returns (address)',
  'function getNonce() view returns (uint256)',
  'function execute(address target, uint256 value, bytes data) payable returns (bytes)',
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)',
  'function execute(bytes32 mode, bytes executionCalldata) payable',
  'function executeWithSignature(address target, uint256 value, bytes data, uint256 deadline, bytes signature) payable returns (bytes)',
]);

const authorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;
const receiveTypes = {
  ReceiveWithAuthorization: authorizationTypes.TransferWithAuthorization,
} as const;
const cancelTypes = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

const BASE_SEPOLIA = 84532;
const POLYGON = 137;

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ chainIds: [BASE_SEPOLIA, POLYGON] });
}, 60_000);

afterAll(async () => {
  await devnet?.stop();
});

function clients(chainId: number, privateKey?: Hex) {
  const chain = devnetChain(devnet, chainId);
  const viemChain = chainDefinition(chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl);
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const account = privateKeyToAccount(privateKey ?? generatePrivateKey());
  const wallet = createWalletClient({ account, chain: viemChain, transport });
  return { chain, publicClient, wallet, account };
}

async function chainTime(chainId: number): Promise<bigint> {
  const { publicClient } = clients(chainId);
  return (await publicClient.getBlock()).timestamp;
}

describe('startDevnet', () => {
  it('deploys the contracts at the same addresses every run', async () => {
    const base = devnetChain(devnet, BASE_SEPOLIA);
    const polygon = devnetChain(devnet, POLYGON);
    expect(base.contracts).toEqual({ ...expectedDevnetContracts(BASE_SEPOLIA), entryPoint: ENTRY_POINT_V07 });
    expect(polygon.contracts).toEqual({ ...expectedDevnetContracts(POLYGON), entryPoint: ENTRY_POINT_V07 });
    // The tokens live at their real chains' addresses, as tools that know them expect.
    expect(base.contracts.usdc).toBe('0x036CbD53842c5426634e7929541eC2318f3dCF7e');
    expect(base.contracts.weth).toBe('0x4200000000000000000000000000000000000006');
    expect(polygon.contracts.usdc).toBe('0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359');
    expect(polygon.contracts.usdce).toBe('0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174');
    expect(polygon.contracts.pusd).toBe('0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB');
    // Other contracts share deployment addresses across chains; 137 adds USDC.e and pUSD after them.
    expect(polygon.contracts.accountFactory).toBe(base.contracts.accountFactory);
    expect(base.contracts.usdce).toBeUndefined();
    expect(polygon.contracts.usdce).toBeDefined();
    expect(polygon.contracts.pusd).toBeDefined();
    // 137 also has Safe 1.5.0, the CTF and the collateral ramps, and the Safe Transaction Service fake.
    expect(polygon.polymarket?.contracts?.onramp).toBe(polygon.contracts.collateralOnramp);
    expect(polygon.polymarket?.contracts?.conditionalTokens).toBe(polygon.contracts.conditionalTokens);
    expect(polygon.safeTxServiceUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(base.contracts.safeProxyFactory).toBeUndefined();

    const { publicClient } = clients(BASE_SEPOLIA);
    expect(await publicClient.getChainId()).toBe(BASE_SEPOLIA);
    // One copy of each token: where USDC was deployed (the deployer's first nonce), nothing is left.
    const deployedAt = getContractAddress({ from: base.deployer, nonce: 0n });
    expect(await publicClient.getCode({ address: deployedAt })).toBeUndefined();
    for (const address of Object.values(base.contracts)) {
      expect((await publicClient.getCode({ address }))?.length ?? 0).toBeGreaterThan(2);
    }
    // The real EntryPoint v0.7 answers at its canonical address.
    expect(
      await publicClient.readContract({
        address: ENTRY_POINT_V07,
        abi: parseAbi(['function getNonce(address sender, uint192 key) view returns (uint256)']),
        functionName: 'getNonce',
        args: [base.deployer, 0n],
      }),
    ).toBe(0n);
    expect(devnetRpcUrls(devnet)).toEqual({ [BASE_SEPOLIA]: base.rpcUrl, [POLYGON]: polygon.rpcUrl });
    expect(devnetTokenAddresses(devnet)[POLYGON]).toEqual({
      USDC: polygon.contracts.usdc,
      WETH: polygon.contracts.weth,
      'USDC.e': polygon.contracts.usdce,
      pUSD: polygon.contracts.pusd,
    });
    // info() is plain data (what vitest's provide() carries to workers).
    expect(structuredClone(devnet.info())).toEqual({ chains: devnet.chains, kalshi: devnet.kalshi });
  });

  it('gives the USDC look-alikes USDC-like EIP-712 domains', async () => {
    const cases: [number, Address, string, string][] = [
      [BASE_SEPOLIA, devnetChain(devnet, BASE_SEPOLIA).contracts.usdc, 'USDC', 'USDC'],
      [POLYGON, devnetChain(devnet, POLYGON).contracts.usdc, 'USD Coin', 'USDC'],
      [POLYGON, devnetChain(devnet, POLYGON).contracts.usdce!, 'USD Coin (PoS)', 'USDC.e'],
    ];
    for (const [chainId, address, name, symbol] of cases) {
      const { publicClient } = clients(chainId);
      const read = <F extends 'name' | 'symbol' | 'version' | 'decimals' | 'DOMAIN_SEPARATOR'>(
        functionName: F,
      ) => publicClient.readContract({ address, abi: usdcAbi, functionName });
      expect(await read('name')).toBe(name);
      expect(await read('symbol')).toBe(symbol);
      expect(await read('version')).toBe('2');
      expect(await read('decimals')).toBe(6);
      expect(await read('DOMAIN_SEPARATOR')).toBe(
        hashDomain({
          domain: { name, version: '2', chainId: BigInt(chainId), verifyingContract: address },
          types: {
            EIP712Domain: [
              { name: 'name', type: 'string' },
              { name: 'version', type: 'string' },
              { name: 'chainId', type: 'uint256' },
              { name: 'verifyingContract', type: 'address' },
            ],
          },
        }),
      );
    }
    const { publicClient } = clients(BASE_SEPOLIA);
    const usdc = devnetChain(devnet, BASE_SEPOLIA).contracts.usdc;
    // Type hashes as published for FiatTokenV2 (EIP3009.sol).
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'TRANSFER_WITH_AUTHORIZATION_TYPEHASH',
      }),
    ).toBe('0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267');
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'RECEIVE_WITH_AUTHORIZATION_TYPEHASH',
      }),
    ).toBe('0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8');
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'CANCEL_AUTHORIZATION_TYPEHASH',
      }),
    ).toBe('0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429');
  });
});

describe('EIP-3009 on TestUSDC', () => {
  it('moves funds with a signed transferWithAuthorization and refuses a reused nonce', async () => {
    const chainId = BASE_SEPOLIA;
    const usdc = devnetChain(devnet, chainId).contracts.usdc;
    const payer = await newFundedAccount(devnet, {
      chainId,
      tokens: [{ symbol: 'USDC', amount: 100_000_000n }],
    });
    const relayer = await newFundedAccount(devnet, { chainId });
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const { publicClient, wallet } = clients(chainId, relayer.privateKey);
    const payerAccount = privateKeyToAccount(payer.privateKey);

    const now = await chainTime(chainId);
    const message = {
      from: payer.address,
      to: payee,
      value: 2_500_000n,
      validAfter: 0n,
      validBefore: now + 3600n,
      nonce: keccak256(toHex('payment-1')),
    };
    const signature = await payerAccount.signTypedData({
      domain: { name: 'USDC', version: '2', chainId, verifyingContract: usdc },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const { r, s, v } = parseSignature(signature);
    const args = [
      message.from,
      message.to,
      message.value,
      message.validAfter,
      message.validBefore,
      message.nonce,
      Number(v),
      r,
      s,
    ] as const;
    const hash = await wallet.writeContract({
      address: usdc,
      abi: usdcAbi,
      functionName: 'transferWithAuthorization',
      args,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');

    const balance = (who: Address) =>
      publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [who] });
    expect(await balance(payee)).toBe(2_500_000n);
    expect(await balance(payer.address)).toBe(97_500_000n);
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'authorizationState',
        args: [payer.address, message.nonce],
      }),
    ).toBe(true);
    const used = await publicClient.getContractEvents({
      address: usdc,
      abi: usdcAbi,
      eventName: 'AuthorizationUsed',
      blockHash: receipt.blockHash,
    });
    expect(used.map((e) => e.args)).toEqual([{ authorizer: payer.address, nonce: message.nonce }]);

    // Same authorization again, through either overload: the nonce is spent.
    await expect(
      publicClient.simulateContract({
        account: relayer.address,
        address: usdc,
        abi: usdcAbi,
        functionName: 'transferWithAuthorization',
        args,
      }),
    ).rejects.toThrow(/authorization is used or canceled/);
    await expect(
      publicClient.simulateContract({
        account: relayer.address,
        address: usdc,
        abi: usdcAbi,
        functionName: 'transferWithAuthorization',
        args: [
          message.from,
          message.to,
          message.value,
          message.validAfter,
          message.validBefore,
          message.nonce,
          signature,
        ],
      }),
    ).rejects.toThrow(/authorization is used or canceled/);
  });

  it('checks the validity window, the signer, the payee of receive, and cancellation', async () => {
    const chainId = POLYGON;
    const usdc = devnetChain(devnet, chainId).contracts.usdc;
    const payer = await newFundedAccount(devnet, {
      chainId,
      tokens: [{ symbol: 'USDC', amount: 10_000_000n }],
    });
    const payee = await newFundedAccount(devnet, { chainId });
    const payerAccount = privateKeyToAccount(payer.privateKey);
    const { publicClient, wallet } = clients(chainId, payee.privateKey);
    const domain = { name: 'USD Coin', version: '2', chainId, verifyingContract: usdc } as const;
    const now = await chainTime(chainId);
    const base = {
      from: payer.address,
      to: payee.address,
      value: 1_000_000n,
      validAfter: 0n,
      validBefore: now + 600n,
    };

    const sign = (message: typeof base & { nonce: Hex }) =>
      payerAccount.signTypedData({
        domain,
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message,
      });
    const simulate = (message: typeof base & { nonce: Hex }, signature: Hex) =>
      publicClient.simulateContract({
        account: payee.address,
        address: usdc,
        abi: usdcAbi,
        functionName: 'transferWithAuthorization',
        args: [
          message.from,
          message.to,
          message.value,
          message.validAfter,
          message.validBefore,
          message.nonce,
          signature,
        ],
      });

    const expired = { ...base, validBefore: now - 1n, nonce: keccak256(toHex('expired')) };
    await expect(simulate(expired, await sign(expired))).rejects.toThrow(/authorization is expired/);
    const early = { ...base, validAfter: now + 500n, nonce: keccak256(toHex('early')) };
    await expect(simulate(early, await sign(early))).rejects.toThrow(/authorization is not yet valid/);
    const tampered = { ...base, nonce: keccak256(toHex('tampered')) };
    await expect(simulate({ ...tampered, value: 2_000_000n }, await sign(tampered))).rejects.toThrow(
      /invalid signature/,
    );

    // receiveWithAuthorization: only the payee may submit it.
    const receive = { ...base, nonce: keccak256(toHex('receive')) };
    const receiveSig = await payerAccount.signTypedData({
      domain,
      types: receiveTypes,
      primaryType: 'ReceiveWithAuthorization',
      message: receive,
    });
    const receiveArgs = [
      receive.from,
      receive.to,
      receive.value,
      receive.validAfter,
      receive.validBefore,
      receive.nonce,
      receiveSig,
    ] as const;
    await expect(
      publicClient.simulateContract({
        account: payer.address,
        address: usdc,
        abi: usdcAbi,
        functionName: 'receiveWithAuthorization',
        args: receiveArgs,
      }),
    ).rejects.toThrow(/caller must be the payee/);
    const hash = await wallet.writeContract({
      address: usdc,
      abi: usdcAbi,
      functionName: 'receiveWithAuthorization',
      args: receiveArgs,
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');

    // A canceled authorization can no longer be used.
    const canceled = { ...base, nonce: keccak256(toHex('canceled')) };
    const canceledSig = await sign(canceled);
    const cancelSig = await payerAccount.signTypedData({
      domain,
      types: cancelTypes,
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: canceled.nonce },
    });
    const cancelHash = await wallet.writeContract({
      address: usdc,
      abi: usdcAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, canceled.nonce, cancelSig],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: cancelHash })).status).toBe('success');
    await expect(simulate(canceled, canceledSig)).rejects.toThrow(/authorization is used or canceled/);
  });
});

describe('DevAccount (ERC-1271 / ERC-6492)', () => {
  it('verifies signatures of counterfactual and deployed accounts, and pays by EIP-3009', async () => {
    const chainId = BASE_SEPOLIA;
    const { accountFactory: factory, usdc } = devnetChain(devnet, chainId).contracts;
    const relayer = await newFundedAccount(devnet, { chainId });
    const { publicClient, wallet } = clients(chainId, relayer.privateKey);
    const ownerKey = generatePrivateKey();
    const owner = privateKeyToAccount(ownerKey);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const salt = 7n;

    const account = await publicClient.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, salt],
    });
    expect(await publicClient.getCode({ address: account })).toBeUndefined();

    // Counterfactual: ERC-6492 wrapping with the factory call that would deploy it.
    const factoryData = encodeFunctionData({
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, salt],
    });
    const message = 'Purser devnet sign-in';
    const ownerSig = await owner.signMessage({ message });
    const wrapped = serializeErc6492Signature({ address: factory, data: factoryData, signature: ownerSig });
    expect(await publicClient.verifyMessage({ address: account, message, signature: wrapped })).toBe(true);
    expect(
      await publicClient.verifyMessage({
        address: account,
        message,
        signature: ownerSig,
        factory,
        factoryData,
      }),
    ).toBe(true);
    const strangerWrapped = serializeErc6492Signature({
      address: factory,
      data: factoryData,
      signature: await stranger.signMessage({ message }),
    });
    expect(await publicClient.verifyMessage({ address: account, message, signature: strangerWrapped })).toBe(
      false,
    );
    // Verification simulated the deployment only.
    expect(await publicClient.getCode({ address: account })).toBeUndefined();

    // Deploy; now plain ERC-1271.
    const deployHash = await wallet.writeContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, salt],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: deployHash })).status).toBe('success');
    expect(
      getAddress(
        await publicClient.readContract({ address: account, abi: accountAbi, functionName: 'owner' }),
      ),
    ).toBe(owner.address);
    expect(
      await publicClient.readContract({ address: account, abi: accountAbi, functionName: 'getNonce' }),
    ).toBe(0n);
    expect(await publicClient.verifyMessage({ address: account, message, signature: ownerSig })).toBe(true);
    expect(
      await publicClient.verifyMessage({
        address: account,
        message,
        signature: await stranger.signMessage({ message }),
      }),
    ).toBe(false);
    // A wrapped signature still verifies after deployment (the verifier skips the factory call).
    expect(await publicClient.verifyMessage({ address: account, message, signature: wrapped })).toBe(true);

    // The account pays by EIP-3009 through the `bytes signature` overload (checked by ERC-1271).
    await fundAddress(devnet, {
      chainId,
      address: account,
      tokens: [{ symbol: 'USDC', amount: 5_000_000n }],
    });
    const payee = stranger.address;
    const auth = {
      from: account,
      to: payee,
      value: 1_250_000n,
      validAfter: 0n,
      validBefore: (await chainTime(chainId)) + 600n,
      nonce: keccak256(toHex('smart-account-payment')),
    };
    // The owner signs the EIP-712 digest itself (no EIP-191 prefix): what DevAccount's ERC-1271 checks.
    const digest = hashTypedData({
      domain: { name: 'USDC', version: '2', chainId, verifyingContract: usdc },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: auth,
    });
    const accountSig = await owner.sign({ hash: digest });
    expect(
      await publicClient.readContract({
        address: account,
        abi: accountAbi,
        functionName: 'isValidSignature',
        args: [digest, accountSig],
      }),
    ).toBe('0x1626ba7e');
    const payHash = await wallet.writeContract({
      address: usdc,
      abi: usdcAbi,
      functionName: 'transferWithAuthorization',
      args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, accountSig],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: payHash })).status).toBe('success');
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'balanceOf',
        args: [payee],
      }),
    ).toBe(1_250_000n);

    // The owner executes calls from the account; nobody else may.
    await fundAddress(devnet, { chainId, address: owner.address, eth: 10n ** 18n });
    const ownerWallet = clients(chainId, ownerKey).wallet;
    const transferData = encodeFunctionData({
      abi: usdcAbi,
      functionName: 'transfer',
      args: [payee, 750_000n],
    });
    const execHash = await ownerWallet.writeContract({
      address: account,
      abi: accountAbi,
      functionName: 'execute',
      args: [usdc, 0n, transferData],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: execHash })).status).toBe('success');
    expect(
      await publicClient.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: 'balanceOf',
        args: [account],
      }),
    ).toBe(3_000_000n);
    await expect(
      publicClient.simulateContract({
        account: relayer.address,
        address: account,
        abi: accountAbi,
        functionName: 'execute',
        args: [usdc, 0n, transferData],
      }),
    ).rejects.toThrow(/NotOwner|reverted/);
  });
});

describe('fundAddress', () => {
  it('adds ether and mints tokens, WETH included', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const first = await fundAddress(devnet, {
      chainId: POLYGON,
      address,
      eth: '1000',
      tokens: [
        { symbol: 'USDC.e', amount: 5_000_000n },
        { symbol: 'pUSD', amount: '7000000' },
        { symbol: 'weth', amount: 3n },
      ],
    });
    expect(first.eth).toBe(1000n);
    expect(first.tokens).toEqual({ 'USDC.e': 5_000_000n, pUSD: 7_000_000n, WETH: 3n });
    expect(first.txHashes).toHaveLength(4);
    const second = await fundAddress(devnet, {
      chainId: POLYGON,
      address,
      eth: 500n,
      tokens: [{ symbol: 'pUSD', amount: 1n }],
    });
    expect(second.eth).toBe(1500n);
    expect(second.tokens).toEqual({ pUSD: 7_000_001n });
    await expect(
      fundAddress(devnet, { chainId: BASE_SEPOLIA, address, tokens: [{ symbol: 'pUSD', amount: 1n }] }),
    ).rejects.toThrow(/no token pUSD/);
    await expect(fundAddress(devnet, { chainId: 1, address })).rejects.toThrow(/no chain 1/);
    await expect(fundAddress(devnet, { chainId: POLYGON, address, eth: '-5' })).rejects.toThrow(
      /non-negative/,
    );
  });
});

describe('DevAccount execution', () => {
  it('runs ERC-7579 batches for the owner and relays owner-signed calls once', async () => {
    const chainId = POLYGON;
    const { accountFactory: factory, usdc } = devnetChain(devnet, chainId).contracts;
    const ownerKey = generatePrivateKey();
    const owner = privateKeyToAccount(ownerKey);
    const relayer = await newFundedAccount(devnet, { chainId });
    await fundAddress(devnet, { chainId, address: owner.address, eth: 10n ** 18n });
    const { publicClient, wallet: ownerWallet } = clients(chainId, ownerKey);
    const relayerWallet = clients(chainId, relayer.privateKey).wallet;
    const wait = async (hash: Hex) =>
      expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');

    const salt = 1n;
    const account = await publicClient.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, salt],
    });
    await wait(
      await relayerWallet.writeContract({
        address: factory,
        abi: factoryAbi,
        functionName: 'createAccount',
        args: [owner.address, salt],
      }),
    );
    await fundAddress(devnet, { chainId, address: account, tokens: [{ symbol: 'USDC', amount: 1_000n }] });
    const [a, b] = [
      privateKeyToAccount(generatePrivateKey()).address,
      privateKeyToAccount(generatePrivateKey()).address,
    ];
    const transfer = (to: Address, value: bigint) =>
      encodeFunctionData({ abi: usdcAbi, functionName: 'transfer', args: [to, value] });
    const balance = (who: Address) =>
      publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [who] });

    // Batch (callType 0x01, execType 0x00): abi.encode((address,uint256,bytes)[]).
    const batch = encodeAbiParameters(
      [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
      [
        [
          [usdc, 0n, transfer(a, 100n)],
          [usdc, 0n, transfer(b, 200n)],
        ],
      ],
    );
    const batchMode = pad('0x01', { dir: 'right', size: 32 });
    await wait(
      await ownerWallet.writeContract({
        address: account,
        abi: accountAbi,
        functionName: 'execute',
        args: [batchMode, batch],
      }),
    );
    expect([await balance(a), await balance(b)]).toEqual([100n, 200n]);

    // Single (callType 0x00): target ‖ value ‖ callData, packed. A failing call reverts the lot.
    const singleMode = pad('0x00', { dir: 'right', size: 32 });
    const single = encodePacked(['address', 'uint256', 'bytes'], [usdc, 0n, transfer(a, 5_000n)]);
    await expect(
      publicClient.simulateContract({
        account: owner.address,
        address: account,
        abi: accountAbi,
        functionName: 'execute',
        args: [singleMode, single],
      }),
    ).rejects.toThrow(/exceeds balance/);

    // Relayed: the owner signs Execute(...) under the account's EIP-712 domain; anyone submits it once.
    const deadline = (await chainTime(chainId)) + 600n;
    const data = transfer(b, 50n);
    const signature = await owner.signTypedData({
      domain: { name: 'DevAccount', version: '1', chainId, verifyingContract: account },
      types: {
        Execute: [
          { name: 'target', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'data', type: 'bytes' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Execute',
      message: { target: usdc, value: 0n, data, nonce: 0n, deadline },
    });
    const relayArgs = [usdc, 0n, data, deadline, signature] as const;
    await wait(
      await relayerWallet.writeContract({
        address: account,
        abi: accountAbi,
        functionName: 'executeWithSignature',
        args: relayArgs,
      }),
    );
    expect(await balance(b)).toBe(250n);
    expect(
      await publicClient.readContract({ address: account, abi: accountAbi, functionName: 'getNonce' }),
    ).toBe(1n);
    await expect(
      publicClient.simulateContract({
        account: relayer.address,
        address: account,
        abi: accountAbi,
        functionName: 'executeWithSignature',
        args: relayArgs,
      }),
    ).rejects.toThrow(/BadSignature|reverted/);
  });
});

describe('TestUSDC restored from a saved chain', () => {
  /** TestUSDC as it was before `burn`: today's source without the function and its event. */
  function testUsdcWithoutBurn(): Hex {
    const lines = readFileSync(join(DEVNET_DIR, 'TestUSDC.sol'), 'utf8').split('\n');
    let start = lines.findIndex((l) => l.includes('function burn(uint256 amount)'));
    while (lines[start - 1]?.trimStart().startsWith('///')) start--;
    const end = lines.findIndex((l, i) => i > start && l === '    }');
    lines.splice(start, end - start + 1);
    const source = lines.filter((l) => !l.includes('event Burn(')).join('\n');
    expect(source).not.toMatch(/function burn|event Burn/);
    const compiled = compileSources({ 'TestUSDC.sol': source }).contracts.TestUSDC;
    if (!compiled) throw new Error('TestUSDC did not compile');
    return compiled.deployedBytecode;
  }

  it('gets the current build in place at the next start, with its balances', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'purser-devnet-usdc-'));
    const options = { chainIds: [BASE_SEPOLIA], stateDir: dir, entryPoint: false, bundler: false };
    const started: Devnet[] = [];
    try {
      const first = await startDevnet(options);
      started.push(first);
      const chain = devnetChain(first, BASE_SEPOLIA);
      const usdc = chain.contracts.usdc;
      const viemChain = chainDefinition(BASE_SEPOLIA, chain.rpcUrl);
      // What an earlier version of the devnet left in the state file: TestUSDC without burn.
      const oldCode = testUsdcWithoutBurn();
      await createTestClient({ mode: 'anvil', chain: viemChain, transport: http(chain.rpcUrl) }).setCode({
        address: usdc,
        bytecode: oldCode,
      });
      const holder = await newFundedAccount(first, {
        chainId: BASE_SEPOLIA,
        tokens: [{ symbol: 'USDC', amount: 1_234_567n }],
      });
      const burnAbi = parseAbi(['function burn(uint256 amount)']);
      const client1 = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) });
      await expect(
        client1.simulateContract({
          address: usdc,
          abi: burnAbi,
          functionName: 'burn',
          args: [1n],
          account: holder.address,
        }),
      ).rejects.toThrow();
      await first.stop();

      const logs: string[] = [];
      const second = await startDevnet({ ...options, log: (m) => logs.push(m) });
      started.push(second);
      const rpcUrl = devnetChain(second, BASE_SEPOLIA).rpcUrl;
      const client2 = createPublicClient({ chain: viemChain, transport: http(rpcUrl) });
      const built = artifact(await loadArtifacts(), 'TestUSDC').deployedBytecode;
      expect(await client2.getCode({ address: usdc })).toBe(built);
      expect(logs.filter((l) => l.includes('replaced it with the current build'))).toEqual([
        expect.stringContaining(`TestUSDC at ${usdc}`),
      ]);
      const balance = () =>
        client2.readContract({
          address: usdc,
          abi: usdcAbi,
          functionName: 'balanceOf',
          args: [holder.address],
        });
      expect(await balance()).toBe(1_234_567n);
      const burnWallet = createWalletClient({
        account: privateKeyToAccount(holder.privateKey),
        chain: viemChain,
        transport: http(rpcUrl),
      });
      const hash = await burnWallet.writeContract({
        address: usdc,
        abi: burnAbi,
        functionName: 'burn',
        args: [234_567n],
      });
      expect((await client2.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe('success');
      expect(await balance()).toBe(1_000_000n);
      await second.stop();

      // Once current, a later start leaves it alone.
      const again: string[] = [];
      started.push(await startDevnet({ ...options, log: (m) => again.push(m) }));
      expect(again.filter((l) => l.includes('replaced'))).toEqual([]);
    } finally {
      await Promise.all(started.map((d) => d.stop()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
