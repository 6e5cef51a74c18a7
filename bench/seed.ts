// Bench fixtures written straight into a fresh bench database before the service starts: a
// test-fixture account, optionally with one session (the rows sign-in writes: only the token's
// hash is stored) and a prepaid balance credited through the ledger's own booking, as a top-up's
// would be. Signing in through SIWE needs a chain RPC, which the benches do not run.

import { randomBytes } from 'node:crypto';
import { systemClock } from '../src/core/clock.ts';
import type { DbExecutor } from '../src/core/db/database.ts';
import { newId } from '../src/core/ids.ts';
import { hashToken, newToken, SESSION_TOKEN_PREFIX } from '../src/modules/auth/tokens.ts';
import { creditPrepaid } from '../src/modules/billing/prepaid.ts';
import { fillDefaults, policyHash, type PolicyDocumentInput } from '../src/modules/policies/document.ts';
import { insertPolicy } from '../src/modules/policies/store.ts';
import { buildTokenRegistry } from '../src/modules/registry/index.ts';

export interface SeededAccount {
  accountId: string;
  /** The session token, when a session was asked for. */
  token: string | null;
}

/** One account in `tx`; `session` adds a session valid for an hour, `prepaidMicro` a credit. */
export async function seedAccount(
  tx: DbExecutor,
  options: { session?: boolean; prepaidMicro?: bigint; settlementPrefix?: string } = {},
): Promise<SeededAccount> {
  const accountId = newId('acc');
  const now = systemClock.now();
  await tx
    .insertInto('accounts')
    .values({
      id: accountId,
      address: `0x${randomBytes(20).toString('hex')}`,
      is_test_fixture: true,
      created_at: now,
      offboarded_at: null,
    })
    .execute();
  let token: string | null = null;
  if (options.session) {
    token = newToken(SESSION_TOKEN_PREFIX);
    await tx
      .insertInto('sessions')
      .values({
        id: newId('ses'),
        account_id: accountId,
        token_hash: hashToken(token),
        created_at: now,
        expires_at: new Date(now.getTime() + 3_600_000),
        revoked_at: null,
      })
      .execute();
  }
  if (options.prepaidMicro !== undefined) {
    const credit = await creditPrepaid(tx, systemClock, {
      accountId,
      amountMicroUsd: options.prepaidMicro,
      settlementId: `${options.settlementPrefix ?? 'bench'}:${accountId}`,
    });
    if (!credit.ok) throw new Error('seeding a prepaid balance failed');
  }
  return { accountId, token };
}

/** Version 1 of a Base wallet's policy with these spend caps (defaults for the rest), written straight in. */
export async function seedPolicy(
  db: DbExecutor,
  accountId: string,
  wallet: string,
  spend: NonNullable<PolicyDocumentInput['spend']>,
): Promise<void> {
  const { document, defaulted } = fillDefaults(
    { version: 1, wallet, chain_id: 8453, spend },
    buildTokenRegistry('development'),
  );
  await insertPolicy(db, {
    account_id: accountId,
    wallet,
    version: 1,
    hash: policyHash(document),
    document,
    defaulted,
    created_at: new Date(),
  });
}
