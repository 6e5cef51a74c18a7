// The approval tier on the devnet through the API: a policy whose spend.approvals asks 2 of 3
// approvers above 50 USD. An intent below the threshold runs as always; one above waits, planned,
// with its reservation and fee held and no executor job, until a second approver signs; then it
// fills on chain and is ledgered. Wrong signers and wrong digests change nothing; a late signature
// changes nothing; an approval that expires ends the intent aborted with its fee reversed.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPublicClient, createWalletClient, getAddress, http, parseAbi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signApproval } from '../../../packages/sdk/src/index.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  chainHeld,
  conversionAgent,
  eurcMarket,
  runToEnd,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import { ManualClock } from '../../core/clock.ts';
import { devnetChain } from '../../devnet/devnet.ts';
import { newFundedAccount } from '../../devnet/faucet.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { balanceOf, erc20Asset, walletAccount } from '../ledger/index.ts';
import { expireApproval, type ApprovalView } from './approvals.ts';
import type { Intent } from './index.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
let m: EurcMarket;
const approvers = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()));
const APPROVALS = {
  above_usd: '50',
  approvers: approvers.map((a) => a.address),
  quorum: 2,
  ttl_minutes: 30,
};

beforeAll(async () => {
  m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 100_000 }]);
});
afterAll(async () => {
  await m?.t.close();
});

const agentWithApprovals = () =>
  conversionAgent(devnet, m, 200n * USD, {
    policy: { spend: { per_tx_usd: '1000', daily_usd: '2000', approvals: APPROVALS } },
  });

/** POST /v1/intents/{id}/approvals, with no credential: the signature is the authentication. */
const approve = (id: string, approver: string, signature: string) =>
  m.t.app.fastify.inject({
    method: 'POST',
    url: `/v1/intents/${id}/approvals`,
    payload: { approver, signature },
  });

/** Whether the executor has a job for the intent. */
async function executionQueued(id: string): Promise<boolean> {
  const jobs = await m.t.db.db
    .selectFrom('jobs')
    .select('payload')
    .where('name', '=', 'intents.execute')
    .execute();
  return jobs.some((j) => (j.payload as { intent_id?: string }).intent_id === id);
}

describe('the approval tier', () => {
  it('holds an intent above the threshold until 2 of 3 approvers signed, then fills it on chain', async () => {
    const agent = await agentWithApprovals();
    // Below the threshold nothing changes: no approval, the executor's job at once.
    const small = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 20n * USD));
    expect(small.report['approval']).toBeUndefined();
    expect(await executionQueued(small.id)).toBe(true);

    const funds = (await readPrepaidBalance(m.t.db.db, agent.accountId)).balanceMicro;
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
    expect(intent.status).toBe('planned');
    const approval = intent.report['approval'] as ApprovalView;
    expect(approval).toMatchObject({
      quorum: 2,
      approvers: approvers.map((a) => a.address.toLowerCase()),
      signatures: [],
      state: 'waiting',
    });
    expect(await executionQueued(intent.id)).toBe(false);
    // Its fee is charged and its spend held while it waits: the day's counter holds both intents.
    expect((await readPrepaidBalance(m.t.db.db, agent.accountId)).balanceMicro).toBeLessThan(funds);
    const check = await agent.api<{ rules: { rule: string; value: string }[] }>('POST', '/v1/checks', {
      wallet: agent.wallet,
      kind: 'conversion',
      amount_usd: '0',
      sell_token: 'USDC',
      buy_token: 'EURC',
    });
    expect(Number(check.rules.find((r) => r.rule === 'spend.daily_usd')!.value)).toBeGreaterThanOrEqual(80);

    // A stranger's signature, and an approver's over another amount, are refused.
    const stranger = privateKeyToAccount(generatePrivateKey());
    expectErrorBody(
      await approve(intent.id, stranger.address, await signApproval(stranger, approval)),
      403,
      'FORBIDDEN',
    );
    const typed = approval.typed_data as { message: Record<string, string> };
    const otherAmount = { typed_data: { ...typed, message: { ...typed.message, sellAmount: '59000000' } } };
    expectErrorBody(
      await approve(intent.id, approvers[1]!.address, await signApproval(approvers[1]!, otherAmount)),
      401,
      'AUTH_SIGNATURE_INVALID',
    );

    // One approver, twice: counts once, and the intent still waits.
    for (let i = 0; i < 2; i++) {
      const res = await approve(
        intent.id,
        approvers[0]!.address,
        await signApproval(approvers[0]!, approval),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<ApprovalView>()).toMatchObject({
        state: 'waiting',
        signatures: [{ approver: approvers[0]!.address.toLowerCase() }],
      });
    }
    expect(await executionQueued(intent.id)).toBe(false);

    // The second approver reaches the quorum: the execution is dispatched with it.
    const second = await approve(
      intent.id,
      approvers[1]!.address,
      await signApproval(approvers[1]!, approval),
    );
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json<ApprovalView>().state).toBe('approved');
    expect(await executionQueued(intent.id)).toBe(true);
    const events = await agent.api<{ events: { kind: string; subject: string }[] }>(
      'GET',
      '/v1/events?limit=50',
    );
    const kinds = events.events.filter((e) => e.subject === intent.id).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['intent.approval_requested', 'intent.approved']));

    const usdcBooks = () =>
      balanceOf(m.t.db.db, walletAccount(8453, agent.wallet), erc20Asset(8453, m.usdc.address));
    const before = await chainHeld(m.t, m.usdc, getAddress(agent.account));
    const booksBefore = await usdcBooks();
    expect(await runToEnd(m.t, small.id)).toEqual({ status: 'filled' });
    expect(await runToEnd(m.t, intent.id)).toEqual({ status: 'filled' });
    const after = await chainHeld(m.t, m.usdc, getAddress(agent.account));
    expect(before - after).toBe(80n * USD);
    // The books moved exactly as the chain did (the test's funding was not booked: no watcher here).
    expect(booksBefore - (await usdcBooks())).toBe(before - after);

    // A third approver's late signature changes nothing.
    expectErrorBody(
      await approve(intent.id, approvers[2]!.address, await signApproval(approvers[2]!, approval)),
      409,
      'CONFLICT',
    );
    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    expect(read.status).toBe('filled');
    expect((read.report['approval'] as ApprovalView).signatures).toHaveLength(2);
  });

  it('ends an unapproved intent aborted at its expiry: fee reversed, spend released; later signatures are refused', async () => {
    const agent = await agentWithApprovals();
    const funds = (await readPrepaidBalance(m.t.db.db, agent.accountId)).balanceMicro;
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
    const approval = intent.report['approval'] as ApprovalView;
    expect(
      await approve(intent.id, approvers[0]!.address, await signApproval(approvers[0]!, approval)),
    ).toMatchObject({ statusCode: 200 });

    // Before its time the expiry does nothing.
    expect(await expireApproval({ db: m.t.db.db, clock: m.t.deps.clock }, intent.id)).toBe(false);
    const later = new ManualClock(new Date(Date.parse(approval.expires_at) + 1_000));
    expect(await expireApproval({ db: m.t.db.db, clock: later }, intent.id)).toBe(true);
    expect(await expireApproval({ db: m.t.db.db, clock: later }, intent.id)).toBe(false);

    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    expect(read.status).toBe('aborted');
    expect(read.params.abort).toEqual({ reason: 'POLICY_VIOLATION', detail: 'approval_expired' });
    expect((read.report['approval'] as ApprovalView).state).toBe('expired');
    expect((await readPrepaidBalance(m.t.db.db, agent.accountId)).balanceMicro).toBe(funds);
    expectErrorBody(
      await approve(intent.id, approvers[1]!.address, await signApproval(approvers[1]!, approval)),
      409,
      'CONFLICT',
    );
    expect(await executionQueued(intent.id)).toBe(false);
  });

  it('refuses an approval after the owner cancelled, and answers an unknown intent 404', async () => {
    const agent = await agentWithApprovals();
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
    const approval = intent.report['approval'] as ApprovalView;
    // An approval of one intent is not another's, even of the same amount.
    const twin = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
    expectErrorBody(
      await approve(twin.id, approvers[0]!.address, await signApproval(approvers[0]!, approval)),
      401,
      'AUTH_SIGNATURE_INVALID',
    );
    await agent.api('POST', `/v1/intents/${twin.id}/cancel`);
    await agent.api('POST', `/v1/intents/${intent.id}/cancel`);
    for (const who of [0, 1]) {
      expectErrorBody(
        await approve(intent.id, approvers[who]!.address, await signApproval(approvers[who]!, approval)),
        409,
        'CONFLICT',
      );
    }
    expect(await executionQueued(intent.id)).toBe(false);
    const signature = await signApproval(approvers[0]!, approval);
    expectErrorBody(
      await approve('7d2f4a91-3c6e-4b8d-9f15-a0e8c2b47d36', approvers[0]!.address, signature),
      404,
      'NOT_FOUND',
    );
    expectErrorBody(await approve('not-an-id', approvers[0]!.address, signature), 404, 'NOT_FOUND');
  });

  it('refuses a policy whose quorum exceeds its approvers, or that names one twice', async () => {
    const agent = await agentWithApprovals();
    const publish = (approvals: Record<string, unknown>) =>
      m.t.app.fastify.inject({
        method: 'PUT',
        url: '/v1/policies',
        headers: { authorization: `Bearer ${agent.sessionToken}`, 'idempotency-key': crypto.randomUUID() },
        payload: { version: 1, wallet: agent.wallet, chain_id: 8453, spend: { approvals } },
      });
    for (const bad of [
      { ...APPROVALS, quorum: 4 },
      { ...APPROVALS, approvers: [approvers[0]!.address, approvers[0]!.address.toLowerCase()], quorum: 1 },
      { ...APPROVALS, ttl_minutes: 0 },
      { ...APPROVALS, above_usd: 'fifty' },
    ]) {
      const res = await publish(bad);
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
  });

  it('checks a waiting intent against the newest policy when its quorum dispatches it: a stricter one aborts it, a looser one does not', async () => {
    for (const [perTx, outcome] of [
      ['55', 'aborted'],
      ['1500', 'filled'],
    ] as const) {
      const agent = await agentWithApprovals();
      const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
      const approval = intent.report['approval'] as ApprovalView;
      await agent.api('PUT', '/v1/policies', {
        version: 1,
        wallet: agent.wallet,
        chain_id: 8453,
        execution: { max_slippage_bps: 100 },
        spend: { per_tx_usd: perTx, daily_usd: '2000', approvals: APPROVALS },
      });
      for (const who of [0, 1]) {
        const res = await approve(
          intent.id,
          approvers[who]!.address,
          await signApproval(approvers[who]!, approval),
        );
        expect(res.statusCode, res.body).toBe(200);
      }
      const held = await chainHeld(m.t, m.usdc, getAddress(agent.account));
      const end = await runToEnd(m.t, intent.id);
      expect(end.status, JSON.stringify(end.abort)).toBe(outcome);
      const moved = held - (await chainHeld(m.t, m.usdc, getAddress(agent.account)));
      if (outcome === 'aborted') {
        expect(end.abort).toMatchObject({ reason: 'POLICY_VIOLATION' });
        expect(moved).toBe(0n);
      } else {
        expect(moved).toBe(60n * USD);
      }
    }
  });

  it('counts a smart-account approver by ERC-1271', async () => {
    // A deployed devnet smart account whose ERC-1271 answers for its owner's signature of the hash.
    const chainId = 8453;
    const { rpcUrl, contracts } = devnetChain(devnet, chainId);
    const factoryAbi = parseAbi([
      'function createAccount(address owner, uint256 salt) returns (address)',
      'function getAddress(address owner, uint256 salt) view returns (address)',
    ]);
    const relayer = await newFundedAccount(devnet, { chainId });
    const wallet = createWalletClient({
      account: privateKeyToAccount(relayer.privateKey),
      chain: chainDefinition(chainId, rpcUrl),
      transport: http(rpcUrl),
    });
    const client = createPublicClient({ transport: http(rpcUrl) });
    const owner = privateKeyToAccount(generatePrivateKey());
    const hash = await wallet.writeContract({
      address: contracts.accountFactory,
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, 7n],
    });
    await client.waitForTransactionReceipt({ hash });
    const smart = await client.readContract({
      address: contracts.accountFactory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, 7n],
    });

    const agent = await conversionAgent(devnet, m, 200n * USD, {
      policy: {
        spend: {
          per_tx_usd: '1000',
          daily_usd: '2000',
          approvals: { above_usd: '50', approvers: [smart], quorum: 1, ttl_minutes: 30 },
        },
      },
    });
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
    const approval = intent.report['approval'] as ApprovalView;
    // The owner's signature is the account's (ERC-1271); a stranger's is not.
    const stranger = privateKeyToAccount(generatePrivateKey());
    expectErrorBody(
      await approve(intent.id, smart, await stranger.sign({ hash: approval.digest as Hex })),
      401,
      'AUTH_SIGNATURE_INVALID',
    );
    const res = await approve(intent.id, smart, await owner.sign({ hash: approval.digest as Hex }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<ApprovalView>().state).toBe('approved');
    expect(await executionQueued(intent.id)).toBe(true);
  });

  it('lets exactly one of a quorum-reaching approval and the expiry win when they race', async () => {
    const agent = await agentWithApprovals();
    for (let round = 0; round < 4; round++) {
      const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 51n * USD));
      const approval = intent.report['approval'] as ApprovalView;
      await approve(intent.id, approvers[0]!.address, await signApproval(approvers[0]!, approval));
      const signature = await signApproval(approvers[1]!, approval);
      const later = new ManualClock(new Date(Date.parse(approval.expires_at) + 1_000));
      const [approved, expired] = await Promise.all([
        approve(intent.id, approvers[1]!.address, signature),
        expireApproval({ db: m.t.db.db, clock: later }, intent.id),
      ]);
      const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
      if (expired) {
        expectErrorBody(approved, 409, 'CONFLICT');
        expect(read.status).toBe('aborted');
        expect(await executionQueued(intent.id)).toBe(false);
      } else {
        expect(approved.statusCode, approved.body).toBe(200);
        expect(read.status).toBe('planned');
        expect((read.report['approval'] as ApprovalView).state).toBe('approved');
        expect(await executionQueued(intent.id)).toBe(true);
        await agent.api('POST', `/v1/intents/${intent.id}/cancel`);
      }
    }
  });
});
