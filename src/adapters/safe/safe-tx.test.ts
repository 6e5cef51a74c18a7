import {
  decodeFunctionData,
  encodeAbiParameters,
  getAddress,
  hashTypedData,
  keccak256,
  recoverTypedDataAddress,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  buildSafeTx,
  ecdsaSafeSignature,
  encodeExecTransaction,
  encodeMultiSendCallOnly,
  encodeSafeSetup,
  encodeSwapOwner,
  MULTI_SEND_ABI,
  packSafeSignatures,
  prevalidatedSafeSignature,
  SAFE_ABI,
  SAFE_DOMAIN_TYPEHASH,
  SAFE_SENTINEL_OWNERS,
  SAFE_TX_TYPE,
  SAFE_TX_TYPEHASH,
  safeTxHash,
  safeTxTypedData,
  typeHash,
} from './safe-tx.ts';

// Safe's own SDK, to check these functions against. Loaded by a module name TypeScript does not
// resolve: the SDK's type declarations widen viem's Address to string for the whole program (a
// `declare module 'abitype'` augmentation), so only the few functions used are typed, here.
interface ProtocolKit {
  buildSignatureBytes(signatures: unknown[]): Hex;
  calculateSafeTransactionHash(safe: Address, tx: unknown, safeVersion: string, chainId: bigint): Hex;
  encodeMultiSendData(txs: { to: Address; value: string; data: Hex; operation: number }[]): Hex;
  EthSafeSignature: new (signer: Address, data: Hex) => unknown;
  generatePreValidatedSignature(owner: Address): { data: Hex };
}
const PROTOCOL_KIT: string = '@safe-global/protocol-kit';
const {
  buildSignatureBytes,
  calculateSafeTransactionHash,
  encodeMultiSendData,
  EthSafeSignature,
  generatePreValidatedSignature,
} = (await import(PROTOCOL_KIT)) as ProtocolKit;

const SAFE: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const TOKEN: Address = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512';

describe('SafeTx typed data', () => {
  it('uses the type hashes of Safe.sol', () => {
    expect(typeHash(SAFE_TX_TYPE)).toBe(SAFE_TX_TYPEHASH);
    expect(typeHash('EIP712Domain(uint256 chainId,address verifyingContract)')).toBe(SAFE_DOMAIN_TYPEHASH);
  });

  it('hashes as Safe does: keccak(0x1901 ‖ domain ‖ keccak(typehash ‖ fields, data hashed))', () => {
    const tx = buildSafeTx({ to: TOKEN, data: '0xa9059cbb0000', nonce: 7n, value: 3n });
    const domain = keccak256(
      encodeAbiParameters(
        [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
        [SAFE_DOMAIN_TYPEHASH, 137n, SAFE],
      ),
    );
    const struct = keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'address' },
          { type: 'uint256' },
          { type: 'bytes32' },
          { type: 'uint8' },
          { type: 'uint256' },
          { type: 'uint256' },
          { type: 'uint256' },
          { type: 'address' },
          { type: 'address' },
          { type: 'uint256' },
        ],
        [
          SAFE_TX_TYPEHASH,
          TOKEN,
          3n,
          keccak256('0xa9059cbb0000'),
          0,
          0n,
          0n,
          0n,
          zeroAddress,
          zeroAddress,
          7n,
        ],
      ),
    );
    const expected = keccak256(`0x1901${domain.slice(2)}${struct.slice(2)}` as Hex);
    expect(safeTxHash(137, SAFE, tx)).toBe(expected);
    expect(hashTypedData(safeTxTypedData(137, SAFE, tx))).toBe(expected);
  });

  it('gives the hash Safe’s own SDK (protocol-kit) computes for Safe 1.5.0', () => {
    const tx = buildSafeTx({ to: TOKEN, data: '0x095ea7b3', nonce: 12n, operation: 1, safeTxGas: 5n });
    const sdk = calculateSafeTransactionHash(
      SAFE,
      {
        ...tx,
        value: tx.value.toString(),
        safeTxGas: tx.safeTxGas.toString(),
        baseGas: tx.baseGas.toString(),
        gasPrice: tx.gasPrice.toString(),
        nonce: Number(tx.nonce),
      },
      '1.5.0',
      137n,
    );
    expect(safeTxHash(137, SAFE, tx)).toBe(sdk);
  });

  it('fills Safe’s defaults', () => {
    expect(buildSafeTx({ to: TOKEN, nonce: 0n })).toEqual({
      to: TOKEN,
      value: 0n,
      data: '0x',
      operation: 0,
      safeTxGas: 0n,
      baseGas: 0n,
      gasPrice: 0n,
      gasToken: zeroAddress,
      refundReceiver: zeroAddress,
      nonce: 0n,
    });
  });
});

describe('Safe signatures', () => {
  it('packs EIP-712 signatures with v 27/28, sorted by signer, as the SDK does', async () => {
    const accounts = Array.from({ length: 4 }, () => privateKeyToAccount(generatePrivateKey()));
    const tx = buildSafeTx({ to: TOKEN, data: '0x1234', nonce: 1n });
    const typed = safeTxTypedData(137, SAFE, tx);
    const signed = await Promise.all(
      accounts.map(async (a) => ecdsaSafeSignature(a.address, await a.signTypedData(typed))),
    );
    const packed = packSafeSignatures(signed);
    expect((packed.length - 2) / 2).toBe(65 * 4);
    // Each 65-byte part recovers to the signers in ascending address order, v 27 or 28.
    const byAddress = [...accounts].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
    for (let i = 0; i < 4; i++) {
      const part = `0x${packed.slice(2 + i * 130, 2 + (i + 1) * 130)}` as Hex;
      expect([27, 28]).toContain(Number.parseInt(part.slice(-2), 16));
      expect(await recoverTypedDataAddress({ ...typed, signature: part })).toBe(byAddress[i]!.address);
    }
    const sdk = buildSignatureBytes(signed.map((s) => new EthSafeSignature(s.signer, s.data)));
    expect(packed).toBe(sdk);
  });

  it('moves y-parity v (0/1) up to 27/28 and refuses other forms', () => {
    const r = 'ab'.repeat(32);
    const s = 'cd'.repeat(32);
    const signer = getAddress('0x000000000000000000000000000000000000beef');
    expect(ecdsaSafeSignature(signer, `0x${r}${s}00`).data).toBe(`0x${r}${s}1b`);
    expect(ecdsaSafeSignature(signer, `0x${r}${s}01`).data).toBe(`0x${r}${s}1c`);
    expect(ecdsaSafeSignature(signer, `0x${r}${s}1c`).data).toBe(`0x${r}${s}1c`);
    expect(() => ecdsaSafeSignature(signer, `0x${r}${s}1f`)).toThrow(/v must be/);
    expect(() => ecdsaSafeSignature(signer, `0x${r}`)).toThrow(/65 bytes/);
  });

  it('builds the pre-validated signature as the SDK does, and refuses duplicates', () => {
    const owner = getAddress('0x00000000000000000000000000000000000a11ce');
    expect(prevalidatedSafeSignature(owner).data).toBe(generatePreValidatedSignature(owner).data);
    expect(() =>
      packSafeSignatures([prevalidatedSafeSignature(owner), prevalidatedSafeSignature(owner)]),
    ).toThrow(/Two signatures/);
    expect(packSafeSignatures([])).toBe('0x');
  });
});

describe('Safe calldata', () => {
  it('encodes execTransaction with the SafeTx fields and the signatures', () => {
    const tx = buildSafeTx({ to: TOKEN, data: '0xdeadbeef', nonce: 4n, operation: 1 });
    const data = encodeExecTransaction(tx, '0x01');
    expect(data.slice(0, 10)).toBe('0x6a761202');
    const decoded = decodeFunctionData({ abi: SAFE_ABI, data });
    expect(decoded.args).toEqual([TOKEN, 0n, '0xdeadbeef', 1, 0n, 0n, 0n, zeroAddress, zeroAddress, '0x01']);
  });

  it('finds prevOwner for swapOwner from the owners list', () => {
    const [a, b, c, d] = ['0x0a', '0x0b', '0x0c', '0x0d'].map((x) =>
      getAddress(`0x${x.slice(2).padStart(40, '0')}`),
    );
    const owners = [a!, b!, c!];
    const first = decodeFunctionData({ abi: SAFE_ABI, data: encodeSwapOwner(owners, a!, d!) });
    expect(first.functionName).toBe('swapOwner');
    expect(first.args).toEqual([SAFE_SENTINEL_OWNERS, a, d]);
    expect(encodeSwapOwner(owners, c!, d!).slice(0, 10)).toBe('0xe318b52b');
    expect(decodeFunctionData({ abi: SAFE_ABI, data: encodeSwapOwner(owners, c!, d!) }).args).toEqual([
      b,
      c,
      d,
    ]);
    expect(() => encodeSwapOwner(owners, d!, a!)).toThrow(/not an owner/);
    expect(() => encodeSwapOwner(owners, a!, b!)).toThrow(/already an owner/);
  });

  it('encodes setup with no setup call, module or payment', () => {
    const owner = getAddress('0x00000000000000000000000000000000000a11ce');
    const handler = getAddress('0x00000000000000000000000000000000000f0f0f');
    const data = encodeSafeSetup({ owners: [owner], threshold: 1, fallbackHandler: handler });
    expect(data.slice(0, 10)).toBe('0xb63e800d');
    expect(decodeFunctionData({ abi: SAFE_ABI, data }).args).toEqual([
      [owner],
      1n,
      zeroAddress,
      '0x',
      handler,
      zeroAddress,
      0n,
      zeroAddress,
    ]);
  });

  it('packs MultiSendCallOnly batches as the SDK does', () => {
    const calls = [
      { to: TOKEN, data: '0x095ea7b3aa' as Hex },
      { to: SAFE, value: 5n, data: '0x' as Hex },
    ];
    const data = encodeMultiSendCallOnly(calls);
    expect(data.slice(0, 10)).toBe('0x8d80ff0a');
    const [transactions] = decodeFunctionData({ abi: MULTI_SEND_ABI, data }).args;
    expect(transactions).toBe(
      encodeMultiSendData([
        { to: TOKEN, value: '0', data: '0x095ea7b3aa', operation: 0 },
        { to: SAFE, value: '5', data: '0x', operation: 0 },
      ]),
    );
    expect(() => encodeMultiSendCallOnly([])).toThrow(/at least one/);
  });
});
