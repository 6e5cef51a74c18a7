// A complete agent on Purser with @purser/sdk: sign in with its wallet, get a funded Kernel account
// (the devnet faucet), publish a policy, delegate to the executor, top up, quote, convert, and take
// the signed webhook that says the conversion filled. PURSER_URL=http://127.0.0.1:8080 npx tsx examples/agent.ts
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ok, printExchange, Purser, signDelegation, signTopUp, verifyWebhook } from '@purser/sdk';

const owner = privateKeyToAccount(generatePrivateKey()); // the agent's key
const purser = new Purser({ baseUrl: process.env.PURSER_URL ?? 'http://127.0.0.1:8080', ...(process.env.PURSER_VERBOSE ? { onExchange: printExchange } : {}) });
const { api } = purser;
await purser.signIn(owner);

// A webhook receiver: every delivery is verified; the conversion's outcome settles `outcome`.
const { secret } = await ok(api.GET('/v1/webhooks/secret'));
let settle: (event: { kind: string; data: Record<string, unknown> }) => void = () => {};
const outcome = new Promise<{ kind: string; data: Record<string, unknown> }>((resolve) => (settle = resolve));
const receiver: Server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk)).on('end', () => {
    const event = verifyWebhook<{ kind: string; data: Record<string, unknown> }>({ secret, headers: req.headers, body });
    if (event.kind === 'intent.filled' || event.kind === 'intent.aborted') settle(event);
    res.end();
  });
});
await once(receiver.listen(0, '127.0.0.1'), 'listening');
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/purser`;
await ok(api.PUT('/v1/webhooks/endpoint', { body: { url: hook } }));

// Base's tokens and the devnet AMM's router; USDC for top-ups and a Kernel account holding USDC and ETH.
const [base] = (await ok(api.GET('/v1/tokens', { params: { query: { chain_id: '8453' } } }))).chains;
const token = (symbol: string) => base!.tokens.find((t) => t.symbol === symbol)!.address;
const router = base!.venues.find((v) => v.name === 'devnet-amm')!.contracts[0]!;
await ok(api.POST('/v1/dev/faucet', { body: { chain_id: 8453, address: owner.address, tokens: [{ symbol: 'USDC', amount: '10000000' }] } }));
const kernel = await ok(api.POST('/v1/dev/kernel-accounts', { body: { chain_id: 8453, owner: owner.address, eth_wei: '50000000000000000', tokens: [{ symbol: 'USDC', amount: '1000000000' }] } }));
const wallet = kernel.address;

// A policy, then a delegation: approve USDC and swap on the router (Uniswap v2's swapExactTokensForTokens).
await ok(api.PUT('/v1/policies', { body: { version: 1, wallet, chain_id: 8453, execution: { max_slippage_bps: 100 }, spend: { per_tx_usd: '1000', daily_usd: '2000' } } }));
const calls = [{ target: token('USDC'), selector: '0x095ea7b3', value_limit: '0' }, { target: router, selector: '0x38ed1739', value_limit: '0' }];
const prepared = await ok(api.POST('/v1/delegations/prepare', { body: { account: wallet, chain_id: 8453, calls, valid_until: Math.floor(Date.now() / 1000) + 86_400 } }));
await ok(api.POST('/v1/delegations/{id}/confirm', { params: { path: { id: prepared.id } }, body: { enable_sig: await signDelegation(owner, prepared), owner: owner.address } }));

// Top up 5 USD of prepaid balance (fees), quote, convert 800 USDC to EURC (in slices, the devnet's keeper arbitraging between them).
const terms = await ok(api.GET('/v1/balance/topups/terms'));
await ok(api.POST('/v1/balance/topups', { body: await signTopUp(owner, terms, { value: '5000000' }) }));
const sale = { sell_token: token('USDC'), buy_token: token('EURC'), sell_amount: '800000000' };
const quote = await ok(api.POST('/v1/quotes', { body: { ...sale, chain_id: 8453 } }));
const intent = await ok(api.POST('/v1/intents', { body: { ...sale, wallet, kind: 'conversion', venues: ['devnet-amm'], max_slippage_bps: 100 } }));
const event = await outcome;
const done = await ok(api.GET('/v1/intents/{id}', { params: { path: { id: intent.id } } }));
const period = new Date().toISOString().slice(0, 7);
const statement = await ok(api.GET('/v1/statements', { params: { query: { wallet, period } } }));
receiver.close();
console.log(JSON.stringify({ quote_best: quote.full_size.quotes[0], event: event.kind, intent: done.status, totals: (done.report as { totals?: unknown }).totals, statement: typeof statement === 'object' ? statement.content_hash : statement }));
if (done.status !== 'filled') process.exit(1);
