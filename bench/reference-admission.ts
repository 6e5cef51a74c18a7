// The references intent admission and the keyed fee path are measured against: the same writes
// in ONE round trip, one call of a PL/pgSQL function through plain `pg` behind a bare node:http
// server (POST /v1/intents and POST /v1/feedback). It checks
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
 * and the stored answer. Anything refused raises. bench/admission-parts.ts leaves parts out by
 * naming them in the setting `purser_bench.skip` (unset here: every part runs).
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
  -- The parts bench/admission-parts.ts leaves out (none unless it sets purser_bench.skip).
  v_skip text[] := string_to_array(coalesce(current_setting('purser_bench.skip', true), ''), ' ');
BEGIN
  SELECT s.account_id INTO v_account FROM sessions s
   WHERE s.token_hash = p_token_hash AND s.revoked_at IS NULL AND s.expires_at > p_now;
  IF NOT FOUND THEN RAISE EXCEPTION 'unauthenticated' USING ERRCODE = 'PK401'; END IF;
  PERFORM purser_claim_idempotency_key_or_refuse(v_account, 'POST', '/v1/intents', p_key, p_fingerprint,
    p_now, p_now + interval '7 days', '3s');
  SELECT version, hash INTO v_policy FROM policies WHERE account_id = v_account AND wallet = p_wallet
   ORDER BY version DESC LIMIT 1;
  IF NOT 'reservation' = ANY (v_skip) THEN
    SELECT * INTO v_reserved FROM purser_reserve_spend(v_account, p_wallet, p_intent::text, p_value, p_now,
      p_now + interval '30 minutes');
    IF v_reserved.outcome <> 'ok' THEN RAISE EXCEPTION '%', v_reserved.outcome USING ERRCODE = 'PK422'; END IF;
  END IF;
  v_entries := ARRAY['account:' || v_account || ':prepaid', '${FEE_REVENUE}'];
  IF NOT 'fee' = ANY (v_skip) THEN
    SELECT * INTO v_posted FROM purser_ledger_post(p_group, 'fee:conversion_intent:' || p_intent, p_ids[1],
      v_account, 'fee.conversion_intent', 'sha256:' || v_policy.hash, NULL,
      jsonb_build_object('product', 'conversion_intent', 'wallet', p_wallet), p_now,
      v_entries, ARRAY['${USD}', '${USD}'], ARRAY[p_fee, -p_fee]::numeric[]);
    IF v_posted.outcome <> 'ok' THEN RAISE EXCEPTION '%', v_posted.outcome USING ERRCODE = 'PK402'; END IF;
  END IF;
  IF NOT 'balance_debited' = ANY (v_skip) THEN
    PERFORM purser_emit_event(p_ids[2], v_account, 'balance.debited', p_group,
      jsonb_build_object('product', 'conversion_intent', 'group_id', p_group, 'wallet', p_wallet), p_now);
  END IF;
  IF NOT 'intent' = ANY (v_skip) THEN
    PERFORM purser_insert_intent(p_intent, v_account, p_wallet, (p_params->>'chain_id')::int, 'conversion',
      'planned', v_policy.version, v_policy.hash, p_params, p_value, p_intent::text, p_group, p_fee, p_now);
  END IF;
  IF NOT 'intent_planned' = ANY (v_skip) THEN
    PERFORM purser_emit_event(p_ids[3], v_account, 'intent.planned', p_intent::text,
      jsonb_build_object('id', p_intent, 'wallet', p_wallet, 'policy_version', v_policy.version), p_now);
  END IF;
  IF NOT 'audit' = ANY (v_skip) THEN
    PERFORM purser_record_audit(p_ids[4], v_account, 'session', 'intent.planned', p_intent::text,
      jsonb_build_object('id', p_intent, 'wallet', p_wallet), p_now, true, '127.0.0.1', 'autocannon');
  END IF;
  IF NOT 'job' = ANY (v_skip) THEN
    PERFORM purser_enqueue_job(p_ids[5], 'intents.execute', jsonb_build_object('intent_id', p_intent), 5,
      p_intent::text, p_now);
  END IF;
  v_answer := jsonb_build_object('id', p_intent, 'wallet', p_wallet, 'kind', 'conversion', 'status', 'planned',
    'policy_version', v_policy.version, 'policy_hash', v_policy.hash, 'params', p_params,
    'report', '{}'::jsonb, 'created_at', p_now, 'updated_at', p_now)::text;
  PERFORM purser_store_idempotency_response(v_account, 'POST', '/v1/intents', p_key, 201, v_answer);
  RETURN v_answer;
END;
$$;`;

/**
 * The keyed fee path's reference (POST /v1/feedback with an Idempotency-Key): the session, the
 * key's row, the 1 USD fee's group and entries and its `balance.debited` event, the feature
 * request, its `feedback.created` event and audit fact, and the stored answer.
 */
export const REFERENCE_FEEDBACK_FUNCTION = `
CREATE OR REPLACE FUNCTION bench_reference_feedback(
  p_token_hash text, p_key text, p_fingerprint text, p_title text, p_body text, p_fee bigint,
  p_now timestamptz, p_request text, p_group text, p_ids text[]
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_account text;
  v_posted record;
  v_answer text;
BEGIN
  SELECT s.account_id INTO v_account FROM sessions s
   WHERE s.token_hash = p_token_hash AND s.revoked_at IS NULL AND s.expires_at > p_now;
  IF NOT FOUND THEN RAISE EXCEPTION 'unauthenticated' USING ERRCODE = 'PK401'; END IF;
  PERFORM purser_claim_idempotency_key_or_refuse(v_account, 'POST', '/v1/feedback', p_key, p_fingerprint,
    p_now, p_now + interval '7 days', '3s');
  SELECT * INTO v_posted FROM purser_ledger_post(p_group, 'fee:feedback:' || p_request, p_ids[1],
    v_account, 'fee.feedback', NULL, NULL, jsonb_build_object('product', 'feedback'), p_now,
    ARRAY['account:' || v_account || ':prepaid', '${FEE_REVENUE}'], ARRAY['${USD}', '${USD}'],
    ARRAY[p_fee, -p_fee]::numeric[]);
  IF v_posted.outcome <> 'ok' THEN RAISE EXCEPTION '%', v_posted.outcome USING ERRCODE = 'PK402'; END IF;
  PERFORM purser_emit_event(p_ids[2], v_account, 'balance.debited', p_group,
    jsonb_build_object('product', 'feedback', 'group_id', p_group), p_now);
  PERFORM purser_insert_feature_request(p_request, v_account, p_title, p_body, 'open', p_now);
  PERFORM purser_emit_event(p_ids[3], v_account, 'feedback.created', p_request,
    jsonb_build_object('id', p_request, 'title', p_title, 'status', 'open', 'paid_ref', p_group), p_now);
  PERFORM purser_record_audit(p_ids[4], v_account, 'session', 'feedback.create', p_request,
    jsonb_build_object('paid_ref', p_group), p_now, true, '127.0.0.1', 'autocannon');
  v_answer := jsonb_build_object('id', p_request, 'status', 'open', 'charged_usd', '1', 'paid_ref', p_group)::text;
  PERFORM purser_store_idempotency_response(v_account, 'POST', '/v1/feedback', p_key, 201, v_answer);
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

/** The reference's call for one request: its SQL and parameters, by path. */
function referenceCall(
  path: string,
  raw: string,
  token: string,
  key: string,
  account: string,
  fees: { intent: bigint; feedback: bigint },
): { text: string; values: unknown[] } {
  const fingerprint = (fee: bigint) =>
    groupFingerprint(account, transfer(prepaidAccount(account), FEE_REVENUE, USD, fee));
  if (path === '/v1/feedback') {
    const body = JSON.parse(raw) as { title: string; body: string };
    return {
      text: 'SELECT bench_reference_feedback($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS answer',
      values: [
        sha256(token),
        key,
        sha256(`POST /v1/feedback ${raw}`),
        body.title,
        body.body,
        fees.feedback.toString(),
        new Date(),
        newId('fr'),
        newId('lgr'),
        [fingerprint(fees.feedback), newId('evt'), newId('evt'), newId('aud')],
      ],
    };
  }
  const body = JSON.parse(raw) as AdmitBody;
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
  return {
    text: 'SELECT bench_reference_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS answer',
    values: [
      sha256(token),
      key,
      sha256(`POST /v1/intents ${raw}`),
      body.wallet.toLowerCase(),
      JSON.stringify(params),
      value.toString(),
      fees.intent.toString(),
      new Date(),
      randomUUID(),
      newId('lgr'),
      [fingerprint(fees.intent), newId('evt'), newId('evt'), newId('aud'), newId('job')],
    ],
  };
}

function main(): void {
  const url = process.env['DATABASE_URL'];
  if (!url) throw new Error('DATABASE_URL is required');
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env['POOL_SIZE'] ?? 10) });
  const fees = {
    intent: BigInt(process.env['INTENT_FEE_MICRO'] ?? '0'),
    feedback: BigInt(process.env['FEEDBACK_FEE_MICRO'] ?? '0'),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const token = (req.headers['authorization'] ?? '').replace(/^Bearer /, '');
      const key = String(req.headers['idempotency-key'] ?? randomUUID());
      // The fee group's fingerprint needs the account, which only the database knows here: the
      // load sends it along, so the call gets it precomputed as the service computes it.
      const account = String(req.headers['x-account'] ?? '');
      const call = referenceCall(req.url ?? '', raw, token, key, account, fees);
      pool.query<{ answer: string }>(call.text, call.values).then(
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
