// The reference the intent admission is measured against: the same writes in ONE round trip,
// one call of a PL/pgSQL function through plain `pg` behind a bare node:http server. It checks
// nothing a client could get wrong (no schema, no policy rules, no switches): it is the floor a
// route that does those writes can reach on this machine, not a product.
//
// Run as a child process by bench/intents.ts: `node --import tsx bench/reference-admission.ts`
// with DATABASE_URL; prints `listening <port>` once it listens on 127.0.0.1.

import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';
import { newId } from '../src/core/ids.ts';
import { FEE_REVENUE, prepaidAccount, USD } from '../src/modules/ledger/chart.ts';
import { groupFingerprint, transfer } from '../src/modules/ledger/ledger.ts';

/**
 * The reference's one call: the session behind the token hash, the Idempotency-Key's row, the
 * spend reservation, the fee's ledger group and entries (through purser_ledger_post, as the
 * service books it) and its `balance.debited` event, the intent, its `intent.planned` event and
 * audit fact (with the client's network context, as the service records it), the execution job
 * and the stored answer. Anything refused raises.
 */
export const REFERENCE_FUNCTION = `
CREATE OR REPLACE FUNCTION bench_reference_admit(
  p_token_hash text, p_key text, p_fingerprint text, p_wallet text, p_params jsonb, p_value bigint,
  p_fee bigint, p_now timestamptz, p_intent uuid, p_group text, p_ids text[]
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_account text;
  v_policy record;
  v_reserved record;
  v_posted record;
  v_answer text;
  v_entries text[];
BEGIN
  SELECT s.account_id INTO v_account FROM sessions s
   WHERE s.token_hash = p_token_hash AND s.revoked_at IS NULL AND s.expires_at > p_now;
  IF NOT FOUND THEN RAISE EXCEPTION 'unauthenticated' USING ERRCODE = 'PK401'; END IF;
  PERFORM purser_claim_idempotency_key_or_refuse(v_account, 'POST', '/v1/intents', p_key, p_fingerprint,
    p_now, p_now + interval '7 days', '3s');
  SELECT version, hash INTO v_policy FROM policies WHERE account_id = v_account AND wallet = p_wallet
   ORDER BY version DESC LIMIT 1;
  SELECT * INTO v_reserved FROM purser_reserve_spend(v_account, p_wallet, p_intent::text, p_value, p_now,
    p_now + interval '30 minutes');
  IF v_reserved.outcome <> 'ok' THEN RAISE EXCEPTION '%', v_reserved.outcome USING ERRCODE = 'PK422'; END IF;
  v_entries := ARRAY['account:' || v_account || ':prepaid', '${FEE_REVENUE}'];
  SELECT * INTO v_posted FROM purser_ledger_post(p_group, 'fee:conversion_intent:' || p_intent, p_ids[1],
    v_account, 'fee.conversion_intent', 'sha256:' || v_policy.hash, NULL,
    jsonb_build_object('product', 'conversion_intent', 'wallet', p_wallet), p_now,
    v_entries, ARRAY['${USD}', '${USD}'], ARRAY[p_fee, -p_fee]::numeric[]);
  IF v_posted.outcome <> 'ok' THEN RAISE EXCEPTION '%', v_posted.outcome USING ERRCODE = 'PK402'; END IF;
  PERFORM purser_emit_event(p_ids[2], v_account, 'balance.debited', p_group,
    jsonb_build_object('product', 'conversion_intent', 'group_id', p_group, 'wallet', p_wallet), p_now);
  PERFORM purser_insert_intent(p_intent, v_account, p_wallet, (p_params->>'chain_id')::int, 'conversion',
    'planned', v_policy.version, v_policy.hash, p_params, p_value, p_intent::text, p_group, p_fee, p_now);
  PERFORM purser_emit_event(p_ids[3], v_account, 'intent.planned', p_intent::text,
    jsonb_build_object('id', p_intent, 'wallet', p_wallet, 'policy_version', v_policy.version), p_now);
  PERFORM purser_record_audit(p_ids[4], v_account, 'session', 'intent.planned', p_intent::text,
    jsonb_build_object('id', p_intent, 'wallet', p_wallet), p_now, true, '127.0.0.1', 'autocannon');
  PERFORM purser_enqueue_job(p_ids[5], 'intents.execute', jsonb_build_object('intent_id', p_intent), 5,
    p_intent::text, p_now);
  v_answer := jsonb_build_object('id', p_intent, 'wallet', p_wallet, 'kind', 'conversion', 'status', 'planned',
    'policy_version', v_policy.version, 'policy_hash', v_policy.hash, 'params', p_params,
    'report', '{}'::jsonb, 'created_at', p_now, 'updated_at', p_now)::text;
  PERFORM purser_store_idempotency_response(v_account, 'POST', '/v1/intents', p_key, 201, v_answer);
  RETURN v_answer;
END;
$$;`;

interface AdmitBody {
  wallet: string;
  sell_token: string;
  buy_token: string;
  sell_amount: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function main(): void {
  const url = process.env['DATABASE_URL'];
  if (!url) throw new Error('DATABASE_URL is required');
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env['POOL_SIZE'] ?? 10) });
  const feeMicro = BigInt(process.env['FEE_MICRO'] ?? '50000');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const token = (req.headers['authorization'] ?? '').replace(/^Bearer /, '');
      const key = String(req.headers['idempotency-key'] ?? randomUUID());
      const body = JSON.parse(raw) as AdmitBody;
      const wallet = body.wallet.toLowerCase();
      // A stable is valued 1:1 (6 decimals), as admission values USDC.
      const value = BigInt(body.sell_amount);
      const params = {
        chain_id: 8453,
        sell_token: body.sell_token.toLowerCase(),
        buy_token: body.buy_token.toLowerCase(),
        sell_amount: body.sell_amount,
        max_slippage_bps: 50,
        venues: [],
        value_usd: String(value / 1_000_000n),
      };
      const groupId = newId('lgr');
      // The fee group's fingerprint needs the account, which only the database knows here: the
      // function gets it precomputed for the token's account, as the service computes it.
      const accountHint = String(req.headers['x-account'] ?? '');
      const fingerprint = groupFingerprint(
        accountHint,
        transfer(prepaidAccount(accountHint), FEE_REVENUE, USD, feeMicro),
      );
      pool
        .query<{ answer: string }>(
          'SELECT bench_reference_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS answer',
          [
            sha256(token),
            key,
            sha256(`POST /v1/intents ${raw}`),
            wallet,
            JSON.stringify(params),
            value.toString(),
            feeMicro.toString(),
            new Date(),
            randomUUID(),
            groupId,
            [fingerprint, newId('evt'), newId('evt'), newId('aud'), newId('job')],
          ],
        )
        .then(
          (r) => {
            res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' });
            res.end(r.rows[0]?.answer ?? '');
          },
          (err: { code?: string; message?: string }) => {
            res.writeHead(err.code === 'PK422' ? 422 : 500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ code: err.code, message: err.message }));
          },
        );
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
  });
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1]?.endsWith('reference-admission.ts')) main();
