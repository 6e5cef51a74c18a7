// `purser ops drifts` and `purser ops adjust` against the configured database: the operator lists
// the open drifts and books an adjustment with a reason; without a reason nothing is booked.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccountWithSession } from '../../../test/support/identity.ts';
import { REPO_ROOT, serviceEnv } from '../../../test/support/service-process.ts';
import { balanceOf, walletAccount } from '../ledger/index.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describe('purser ops drifts / adjust (command line)', () => {
  it.skipIf(!process.env.DATABASE_URL)(
    'lists an open drift and books its adjustment with the reason, audited; refuses one without a reason',
    async () => {
      const db = database.handle.db;
      const acc = await createAccountWithSession(db);
      const wallet = `0x${'5a'.repeat(20)}`;
      const asset = `eip155:8453/erc20:0x${'c0'.repeat(20)}`;
      const now = new Date();
      await db
        .insertInto('ledger_drifts')
        .values({
          id: 'drf_clitest0001',
          account_id: acc.accountId,
          chain_id: 8453,
          wallet,
          asset,
          ledger_amount: '100',
          chain_amount: '70',
          block: '42',
          first_seen_at: now,
          raised_at: now,
          updated_at: now,
        })
        .execute();
      const run = (args: string[]) =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'ops', ...args], {
          cwd: REPO_ROOT,
          env: serviceEnv({ DATABASE_URL: database.url! }),
        });
      const jsonOf = (stdout: string) => JSON.parse(stdout.slice(stdout.indexOf('{')));

      const listed = jsonOf((await run(['drifts'])).stdout);
      expect(listed.drifts).toEqual([
        expect.objectContaining({ id: 'drf_clitest0001', state: 'open', difference: '-30' }),
      ]);
      await expect(run(['adjust', 'drf_clitest0001'])).rejects.toMatchObject({ code: 64 });
      expect(await balanceOf(db, walletAccount(8453, wallet), asset)).toBe(0n);

      const adjusted = jsonOf(
        (await run(['adjust', 'drf_clitest0001', 'Tokens', 'burned', 'by', 'the', 'issuer'])).stdout,
      );
      expect(adjusted).toMatchObject({
        state: 'resolved',
        resolution: 'adjusted',
        reason: 'Tokens burned by the issuer',
      });
      expect(await balanceOf(db, walletAccount(8453, wallet), asset)).toBe(-30n);
      const facts = await db
        .selectFrom('audit_log')
        .select(['actor', 'action'])
        .where('subject', '=', 'drf_clitest0001')
        .execute();
      expect(facts).toEqual([{ actor: 'operator', action: 'ledger.adjusted' }]);
      expect(jsonOf((await run(['drifts'])).stdout).drifts).toEqual([]);
      // Twice: the drift is resolved, nothing more is booked.
      await expect(run(['adjust', 'drf_clitest0001', 'again'])).rejects.toMatchObject({ code: 64 });
      expect(await balanceOf(db, walletAccount(8453, wallet), asset)).toBe(-30n);
    },
    120_000,
  );
});
