// Payments against the devnet: a fresh relayer (its own nonces, so parallel test files never
// race) and a fresh treasury per app, payers funded with devnet USDC, and EIP-3009 signing the
// way a wallet does it.

import { getAddress, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { randomBytes } from 'node:crypto';
import { createViemChainPort } from '../../src/adapters/chain/viem.ts';
import type { Config } from '../../src/config.ts';
import { devnetRpcUrls, devnetToken, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../src/devnet/faucet.ts';
import type { AppDeps } from '../../src/deps.ts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/modules/payments/index.ts';
import { devnetDeps } from './devnet-deps.ts';

export const PAYMENTS_CHAIN = 8453;

export interface PaymentsSetup {
  config: Partial<Config>;
  deps: Partial<AppDeps>;
  treasury: Address;
  relayer: Address;
  usdc: Address;
  /** The devnet USDC's EIP-712 domain on the payments chain. */
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
}

/** Config and dependencies for an app that takes payments on the devnet's chain 8453. */
export async function paymentsSetup(
  devnet: DevnetInfo,
  base: Config,
  overrides: Partial<Config['payments']> = {},
): Promise<PaymentsSetup> {
  const relayerKey = generatePrivateKey();
  const relayer = privateKeyToAccount(relayerKey).address;
  await fundAddress(devnet, { chainId: PAYMENTS_CHAIN, address: relayer, eth: 10n ** 19n });
  const treasury = privateKeyToAccount(generatePrivateKey()).address;
  const usdc = devnetToken(devnet, PAYMENTS_CHAIN, 'USDC');
  const chain = createViemChainPort({
    rpcUrls: devnetRpcUrls(devnet),
    relayerPrivateKey: relayerKey,
    pollingIntervalMs: 50,
  });
  if (!usdc.eip3009) throw new Error('devnet USDC has no EIP-3009 domain');
  return {
    config: {
      payments: {
        ...base.payments,
        chainId: PAYMENTS_CHAIN,
        treasury: treasury.toLowerCase() as `0x${string}`,
        relayerPrivateKey: relayerKey,
        ...overrides,
      },
    },
    deps: { ...(await devnetDeps(devnet, base, chain)), devnet },
    treasury,
    relayer,
    usdc: usdc.address,
    domain: {
      name: usdc.eip3009.name,
      version: usdc.eip3009.version,
      chainId: PAYMENTS_CHAIN,
      verifyingContract: usdc.address,
    },
  };
}

export interface Payer {
  privateKey: Hex;
  address: Address;
}

/** A fresh payer holding `usdc` base units of devnet USDC on the payments chain. */
export async function newPayer(devnet: DevnetInfo, usdc: bigint): Promise<Payer> {
  const funded = await newFundedAccount(devnet, {
    chainId: PAYMENTS_CHAIN,
    tokens: usdc > 0n ? [{ symbol: 'USDC', amount: usdc }] : [],
  });
  return { privateKey: funded.privateKey, address: funded.address };
}

export interface AuthorizationFields {
  to: Address;
  value: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
  /** Sign for another domain (wrong token, wrong chain) to test refusals. */
  domain?: Partial<PaymentsSetup['domain']>;
}

/** The wire body of a signed authorization: `{authorization, signature}` with decimal strings. */
export async function signAuthorization(
  setup: Pick<PaymentsSetup, 'domain'>,
  payer: Payer,
  fields: AuthorizationFields,
): Promise<{ authorization: Record<string, string>; signature: Hex }> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: payer.address,
    to: getAddress(fields.to),
    value: fields.value,
    validAfter: fields.validAfter ?? now - 600n,
    validBefore: fields.validBefore ?? now + 3600n,
    nonce: fields.nonce ?? toHex(randomBytes(32)),
  };
  const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
    domain: { ...setup.domain, ...fields.domain },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return {
    authorization: {
      from: message.from,
      to: message.to,
      value: message.value.toString(),
      validAfter: message.validAfter.toString(),
      validBefore: message.validBefore.toString(),
      nonce: message.nonce,
    },
    signature,
  };
}

/** Whether a signed authorization's nonce is used (or canceled) on the devnet's USDC. */
export async function authorizationUsed(
  setup: PaymentsSetup,
  signed: { authorization: Record<string, string> },
): Promise<boolean> {
  const chain = setup.deps.chain;
  if (!chain) throw new Error('the payments setup has no chain');
  const { from, nonce } = signed.authorization;
  return chain.authorizationState(PAYMENTS_CHAIN, setup.usdc, from as Address, nonce as Hex);
}
