// The reconciler against the devnet: settlements a request left unfinished are finished from
// chain truth, and their effect is applied exactly once however many times it runs.

import { createWalletClient, getAddress, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { createAccountWithSession } from '../../../test/support/identity.ts';
import {
  newPayer,
  PAYMENTS_CHAIN,
  paymentsSetup,
  signAuthorization,
  type PaymentsSetup,
} from '../../../test/support/payments.ts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import { testConfig } from '../../config.ts';
import { newId } from '../../core/ids.ts';
import { devnetChain } from '../../devnet/devnet.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { topupEffect } from '../billing/topups.ts';
import { eip3009WriteAbi } from './eip3009.ts';
import { reconcileStaleSettlements, type SettlementEffects } from './service.ts';
import { findSettlement, insertSettlement } from './store.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
let t: TestApp;
let setup: PaymentsSetup;
const effects: SettlementEffects = { topup: topupEffect };

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig(), { reconcileAfterSeconds: 0 });
  t = await createTestApp({ config: setup.config, deps: setup.deps });
});
afterAll(async () => {
  await t?.close();
});

/** A settlement row as a request writes it before broadcasting, left behind by a crash. */
async function recordOnly(accountId: string, body: Awaited<ReturnType<typeof signAuthorization>>) {
  const a = body.authorization;
  const head = await t.deps.chain!.getBlockNumber(PAYMENTS_CHAIN);
  const { row } = await insertSettlement(t.db.db, {
    id: newId('pay'),
    account_id: accountId,
    purpose: 'topup',
    chain_id: PAYMENTS_CHAIN,
    token: setup.usdc.toLowerCase(),
    payer: a.from!.toLowerCase(),
    payee: a.to!.toLowerCase(),
    value: a.value!,
    valid_after: a.validAfter!,
    valid_before: a.validBefore!,
    nonce: a.nonce!.toLowerCase(),
    signature: body.signature,
    request: { actor: 'system' },
    from_block: head.toString(),
    now: new Date(Date.now() - 60_000),
  });
  return row;
}

describe('reconcileStaleSettlements', () => {
  it('broadcasts a settlement that was recorded but never sent, and credits it once', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 4n * USD);
    const row = await recordOnly(
      acc.accountId,
      await signAuthorization(setup, payer, { to: setup.treasury, value: 4n * USD }),
    );

    const first = await reconcileStaleSettlements(t.deps, effects);
    expect(first.settled).toBeGreaterThanOrEqual(1);
    const settled = await findSettlement(t.db.db, row.id);
    expect(settled).toMatchObject({ status: 'settled', signature: null });
    expect(settled?.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(4n * USD);
    expect(await t.deps.chain!.erc20Balance(PAYMENTS_CHAIN, setup.usdc, payer.address)).toBe(0n);

    await reconcileStaleSettlements(t.deps, effects);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(4n * USD);
  });

  it('settles from the AuthorizationUsed log when someone else submitted the authorization', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 2n * USD);
    const body = await signAuthorization(setup, payer, { to: setup.treasury, value: 2n * USD });
    const row = await recordOnly(acc.accountId, body);

    // The payer (anyone may) submits the same authorization directly.
    const rpcUrl = devnetChain(devnet, PAYMENTS_CHAIN).rpcUrl;
    const wallet = createWalletClient({
      account: privateKeyToAccount(payer.privateKey),
      chain: chainDefinition(PAYMENTS_CHAIN, rpcUrl),
      transport: http(rpcUrl),
    });
    const a = body.authorization;
    const hash = await wallet.writeContract({
      address: setup.usdc,
      abi: eip3009WriteAbi,
      functionName: 'transferWithAuthorization',
      args: [
        getAddress(a.from!),
        getAddress(a.to!),
        BigInt(a.value!),
        BigInt(a.validAfter!),
        BigInt(a.validBefore!),
        a.nonce as Hex,
        body.signature,
      ],
    });
    await t.deps.chain!.waitForReceipt(PAYMENTS_CHAIN, hash);

    await reconcileStaleSettlements(t.deps, effects);
    const settled = await findSettlement(t.db.db, row.id);
    expect(settled).toMatchObject({ status: 'settled', tx_hash: hash.toLowerCase(), signature: null });
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(2n * USD);
  });

  it('fails a settlement whose transfer the token refuses, destroying the signature and crediting nothing', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 1n * USD);
    // Signed for more than the payer holds by the time it is broadcast.
    const row = await recordOnly(
      acc.accountId,
      await signAuthorization(setup, payer, { to: setup.treasury, value: 3n * USD }),
    );
    await reconcileStaleSettlements(t.deps, effects);
    const failed = await findSettlement(t.db.db, row.id);
    expect(failed).toMatchObject({ status: 'failed', signature: null });
    expect(failed?.fail_reason).toMatch(/refused/);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
  });
});
