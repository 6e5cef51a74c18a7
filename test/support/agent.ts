// An agent as the executor tests need one, through the API: an account signed in with a funded
// prepaid balance, its owner's Kernel account from the devnet faucet, a policy for it, and the
// owner's confirmed session-key delegation over the calls given.

import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Delegation } from '../../src/modules/delegations/index.ts';
import type { TestApp } from './app.ts';
import { bearer, createAccountWithSession } from './identity.ts';
import { fundPrepaid } from './prepaid.ts';

export interface AgentOptions {
  chainId?: number;
  /** Wei the faucet gives the Kernel account. */
  ethWei?: bigint;
  /** Whether the faucet deploys the Kernel account now (else the first operation deploys it). */
  deploy?: boolean;
  /** Registry tokens the faucet gives it. */
  tokens?: { symbol: string; amount: string }[];
  /** The delegation's calls. */
  calls: { target: string; selector: string; value_limit: string }[];
  /** Extra policy fields (the wallet and chain are set). */
  policy?: Record<string, unknown>;
  /** The delegation's rate limit: this many operations in all. */
  rateLimit?: number;
  /**
   * Signs in through the API (SIWE, `/v1/auth/challenge` and `/verify`) with the owner's key, so
   * the agent is the owner, and funds no prepaid balance (the test tops it up); otherwise an
   * account and session are made directly and 10 USD of prepaid balance booked.
   */
  signIn?: boolean;
}

/** A wallet's sign-in through the API: the SIWE challenge, signed, verified; its account and session. */
export async function signIn(t: TestApp, key: PrivateKeyAccount) {
  const challenge = await t.app.fastify.inject({
    method: 'POST',
    url: '/v1/auth/challenge',
    payload: { address: key.address },
  });
  if (challenge.statusCode !== 200)
    throw new Error(`challenge answered ${challenge.statusCode}: ${challenge.body}`);
  const { message } = challenge.json<{ message: string }>();
  const verified = await t.app.fastify.inject({
    method: 'POST',
    url: '/v1/auth/verify',
    payload: { message, signature: await key.signMessage({ message }) },
  });
  if (verified.statusCode !== 200)
    throw new Error(`verify answered ${verified.statusCode}: ${verified.body}`);
  const { token } = verified.json<{ token: string }>();
  const account = await t.db.db
    .selectFrom('accounts')
    .select('id')
    .where('address', '=', key.address.toLowerCase())
    .executeTakeFirstOrThrow();
  return { accountId: account.id, sessionToken: token };
}

export async function delegatedAgent(t: TestApp, options: AgentOptions) {
  const chainId = options.chainId ?? 8453;
  const owner = privateKeyToAccount(generatePrivateKey());
  const acc = options.signIn ? await signIn(t, owner) : await createAccountWithSession(t.db.db);
  if (!options.signIn) await fundPrepaid(t.db.db, t.deps.clock, acc.accountId, 10_000_000n);
  const api = async <T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    status?: number,
  ) => {
    const res = await t.app.fastify.inject({
      method,
      url,
      headers: bearer(acc.sessionToken),
      ...(payload === undefined ? {} : { payload }),
    });
    // Plain errors, not assertions: the execution bench uses this outside the test runner.
    if (status === undefined ? res.statusCode >= 300 : res.statusCode !== status) {
      throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    }
    return res.json<T>();
  };
  const faucet = await api<{ address: Address }>('POST', '/v1/dev/kernel-accounts', {
    chain_id: chainId,
    owner: owner.address,
    index: '0',
    eth_wei: (options.ethWei ?? 0n).toString(),
    tokens: options.tokens ?? [],
    ...(options.deploy ? { deploy: true } : {}),
  });
  const account = faucet.address;
  const wallet = account.toLowerCase();
  await api('PUT', '/v1/policies', { version: 1, wallet, chain_id: chainId, ...options.policy });
  const prepared = await api<Delegation>('POST', '/v1/delegations/prepare', {
    account,
    chain_id: chainId,
    calls: options.calls,
    valid_until: Math.floor(Date.now() / 1000) + 7 * 24 * 3600,
    ...(options.rateLimit ? { rate_limit: { count: options.rateLimit } } : {}),
  });
  const enableSig = await owner.signTypedData(
    prepared.typed_data as Parameters<typeof owner.signTypedData>[0],
  );
  await api('POST', `/v1/delegations/${prepared.id}/confirm`, {
    enable_sig: enableSig,
    owner: owner.address,
    index: '0',
  });
  return { ...acc, api, owner, account, wallet, delegationId: prepared.id };
}
