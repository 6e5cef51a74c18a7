// The owner and agent the browser tests look at, set up over HTTP with the SDK as an agent would
// (examples/agent.ts): signed in with the owner's key, a Kernel account from the devnet faucet
// holding USDC and ETH, a policy, a confirmed delegation to swap on the devnet AMM, a top-up.

import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { ok, Purser, signDelegation, signTopUp } from '../../packages/sdk/src/index.ts';

export interface Agent {
  owner: PrivateKeyAccount;
  purser: Purser;
  /** The Kernel account the policy and delegation are for. */
  wallet: string;
  delegationId: string;
  usdc: string;
  eurc: string;
  /** Admits a conversion of `sellAmount` USDC base units to EURC; its id. */
  convert(sellAmount: string): Promise<string>;
}

export async function setUpAgent(url: string): Promise<Agent> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const purser = new Purser({ baseUrl: url });
  const { api } = purser;
  await purser.signIn(owner);
  const [base] = (await ok(api.GET('/v1/tokens', { params: { query: { chain_id: '8453' } } }))).chains;
  const token = (symbol: string) => base!.tokens.find((t) => t.symbol === symbol)!.address;
  const router = base!.venues.find((v) => v.name === 'devnet-amm')!.contracts[0]!;
  await ok(
    api.POST('/v1/dev/faucet', {
      body: { chain_id: 8453, address: owner.address, tokens: [{ symbol: 'USDC', amount: '10000000' }] },
    }),
  );
  const kernel = await ok(
    api.POST('/v1/dev/kernel-accounts', {
      body: {
        chain_id: 8453,
        owner: owner.address,
        eth_wei: '50000000000000000',
        tokens: [{ symbol: 'USDC', amount: '1000000000' }],
      },
    }),
  );
  const wallet = kernel.address;
  await ok(
    api.PUT('/v1/policies', {
      body: {
        version: 1,
        wallet,
        chain_id: 8453,
        execution: { max_slippage_bps: 100 },
        spend: { per_tx_usd: '1000', daily_usd: '2000' },
      },
    }),
  );
  const calls = [
    { target: token('USDC'), selector: '0x095ea7b3', value_limit: '0' },
    { target: router, selector: '0x38ed1739', value_limit: '0' },
  ];
  const prepared = await ok(
    api.POST('/v1/delegations/prepare', {
      body: { account: wallet, chain_id: 8453, calls, valid_until: Math.floor(Date.now() / 1000) + 86_400 },
    }),
  );
  await ok(
    api.POST('/v1/delegations/{id}/confirm', {
      params: { path: { id: prepared.id } },
      body: { enable_sig: await signDelegation(owner, prepared), owner: owner.address },
    }),
  );
  const terms = await ok(api.GET('/v1/balance/topups/terms'));
  await ok(api.POST('/v1/balance/topups', { body: await signTopUp(owner, terms, { value: '5000000' }) }));
  const usdc = token('USDC');
  const eurc = token('EURC');
  return {
    owner,
    purser,
    wallet,
    delegationId: prepared.id,
    usdc,
    eurc,
    convert: async (sellAmount) => {
      const intent = await ok(
        api.POST('/v1/intents', {
          body: {
            wallet,
            kind: 'conversion',
            sell_token: usdc,
            buy_token: eurc,
            sell_amount: sellAmount,
            venues: ['devnet-amm'],
            max_slippage_bps: 100,
          },
        }),
      );
      return intent.id;
    },
  };
}
