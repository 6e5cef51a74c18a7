// An agent as the executor tests need one, through the API: an account signed in with a funded
// prepaid balance, its owner's Kernel account from the devnet faucet, a policy for it, and the
// owner's confirmed session-key delegation over the calls given.

import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Delegation } from '../../src/modules/delegations/index.ts';
import type { TestApp } from './app.ts';
import { bearer, createAccountWithSession } from './identity.ts';
import { fundPrepaid } from './prepaid.ts';

export interface AgentOptions {
  chainId?: number;
  /** Wei the faucet gives the Kernel account. */
  ethWei?: bigint;
  /** Registry tokens the faucet gives it. */
  tokens?: { symbol: string; amount: string }[];
  /** The delegation's calls. */
  calls: { target: string; selector: string; value_limit: string }[];
  /** Extra policy fields (the wallet and chain are set). */
  policy?: Record<string, unknown>;
  /** The delegation's rate limit: this many operations in all. */
  rateLimit?: number;
}

export async function delegatedAgent(t: TestApp, options: AgentOptions) {
  const chainId = options.chainId ?? 8453;
  const acc = await createAccountWithSession(t.db.db);
  await fundPrepaid(t.db.db, t.deps.clock, acc.accountId, 10_000_000n);
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
  const owner = privateKeyToAccount(generatePrivateKey());
  const faucet = await api<{ address: Address }>('POST', '/v1/dev/kernel-accounts', {
    chain_id: chainId,
    owner: owner.address,
    index: '0',
    eth_wei: (options.ethWei ?? 0n).toString(),
    tokens: options.tokens ?? [],
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
