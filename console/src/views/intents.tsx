// Intents: the account's conversions and gas top-ups as they run (the list polls), and each one's
// slices: venue, amounts, price achieved against the reference, gas and hashes. A planned intent
// can be cancelled here.

import { ok, type Schemas, type Session } from '../api.ts';
import { LineChart } from '../charts.tsx';
import { ApprovalPanel, approvalOf } from './approvals.tsx';
import { formatTime, formatUnits, formatUsd, shortHex } from '../format.ts';
import { navigate } from '../router.ts';
import { tokenOf, txLink, useTokens, type TokenBook } from '../tokens.ts';
import { ActionButton, Badge, Empty, Facts, Link, Page, Pending, useLoad } from '../ui.tsx';

type Intent = Schemas['Intent'];

const PAGE = 50;
const FINAL = new Set(['filled', 'cancelled', 'aborted']);

function pair(intent: Intent, book: TokenBook | null) {
  const p = intent.params;
  const sell = tokenOf(book, p.chain_id, p.sell_token);
  const buy = tokenOf(book, p.chain_id, p.buy_token);
  return { sell, buy, text: `${formatUnits(p.sell_amount, sell.decimals)} ${sell.symbol} → ${buy.symbol}` };
}

export function IntentsView(props: { session: Session; wallet: string | null; offset: number }) {
  const { session, wallet, offset } = props;
  const book = useTokens(session);
  const intents = useLoad(
    () =>
      ok(
        session.client.api.GET('/v1/intents', {
          params: { query: { limit: PAGE, offset, ...(wallet ? { wallet } : {}) } },
        }),
      ),
    [session, wallet, offset],
    2_000,
  );
  const query = (o: number) =>
    `/intents?${new URLSearchParams({ ...(wallet ? { wallet } : {}), offset: String(o) })}`;
  return (
    <Page title="Intents">
      {wallet ? (
        <p class="muted">
          Wallet <code>{wallet}</code> only. <Link to="/intents">All wallets</Link>
        </p>
      ) : null}
      {!intents.data ? (
        <Pending loaded={intents} />
      ) : intents.data.intents.length === 0 && offset === 0 ? (
        <Empty title="No intents yet">
          Your agent admits conversions and gas top-ups with <code>POST /v1/intents</code>; each one shows
          here as it runs. A quote first (<code>POST /v1/quotes</code>) shows what it would get.
        </Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="intents">
              <caption class="visually-hidden">Intents, newest first (refreshed every 2 seconds)</caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Conversion</th>
                  <th scope="col" class="num">
                    Value
                  </th>
                  <th scope="col">Wallet</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {intents.data.intents.map((i) => (
                  <tr key={i.id} data-intent={i.id} data-status={i.status}>
                    <td>
                      <Link to={`/intents/${i.id}`}>{formatTime(i.created_at)}</Link>
                    </td>
                    <td>{i.kind}</td>
                    <td>{pair(i, book).text}</td>
                    <td class="num">{formatUsd(i.params.value_usd)}</td>
                    <td>
                      <code>{shortHex(i.wallet)}</code>
                    </td>
                    <td>
                      <Badge value={i.status} />
                      {approvalOf(i)?.state === 'waiting' ? (
                        <>
                          {' '}
                          <Badge value="waiting" />
                        </>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages of intents">
            {offset > 0 ? <Link to={query(Math.max(0, offset - PAGE))}>Newer</Link> : null}
            {intents.data.intents.length === PAGE ? <Link to={query(offset + PAGE)}>Older</Link> : null}
          </nav>
        </>
      )}
    </Page>
  );
}

interface Slice {
  seq: number;
  venue: string;
  state: string;
  sell_amount?: string;
  sold?: string;
  bought?: string;
  price?: string;
  reference_price?: string;
  vs_reference_bps?: number;
  gas_wei?: string;
  tx_hash?: string;
  user_op_hash?: string;
  settled_at?: string;
}

interface Report {
  plan?: { venue?: string; slice_count?: number; interval_ms?: number; impact_bps_at_full_size?: number };
  slices?: Slice[];
  totals?: {
    sold?: string;
    bought?: string;
    gas_wei?: string;
    average_price?: string;
    filled_value_usd?: string;
  };
}

/** A transaction hash, linked to the chain's explorer when one is configured. */
function TxHash({ href, hash }: { href: string | null; hash: string | undefined }) {
  const text = <code title={hash}>{shortHex(hash)}</code>;
  return href ? (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {text}
    </a>
  ) : (
    text
  );
}

function SliceTimeline({ intent, book }: { intent: Intent; book: TokenBook | null }) {
  const report = intent.report as Report;
  const slices = report.slices ?? [];
  const { sell, buy } = pair(intent, book);
  if (slices.length === 0)
    return (
      <Empty title="No slice has settled yet">
        {intent.status === 'planned'
          ? 'The executor takes the intent shortly; its slices show here as they land.'
          : 'This intent settled no slice.'}
      </Empty>
    );
  const priced = slices.filter((s) => s.price && s.reference_price);
  return (
    <>
      <div class="table-wrap">
        <table class="slices">
          <caption>Slices, in the order they settled</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Venue</th>
              <th scope="col">State</th>
              <th scope="col" class="num">
                Sold ({sell.symbol})
              </th>
              <th scope="col" class="num">
                Bought ({buy.symbol})
              </th>
              <th scope="col" class="num">
                Price vs reference
              </th>
              <th scope="col" class="num">
                Gas (wei)
              </th>
              <th scope="col">Transaction</th>
            </tr>
          </thead>
          <tbody>
            {slices.map((s) => (
              <tr key={s.seq} data-slice={s.seq}>
                <td>{s.seq}</td>
                <td>{s.venue}</td>
                <td>
                  <Badge value={s.state} />
                </td>
                <td class="num">{formatUnits(s.sold ?? s.sell_amount, sell.decimals)}</td>
                <td class="num">{formatUnits(s.bought, buy.decimals)}</td>
                <td class="num">{s.vs_reference_bps === undefined ? '—' : `${s.vs_reference_bps} bps`}</td>
                <td class="num">{s.gas_wei ?? '—'}</td>
                <td>
                  <TxHash href={txLink(book, intent.params.chain_id, s.tx_hash)} hash={s.tx_hash} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {priced.length > 0 ? (
        <LineChart
          title={`Price per slice (${buy.symbol} per ${sell.symbol}): achieved against the reference`}
          series={[
            { label: 'achieved', points: priced.map((s) => ({ x: s.seq, y: Number(s.price) })) },
            { label: 'reference', points: priced.map((s) => ({ x: s.seq, y: Number(s.reference_price) })) },
          ]}
          xLabel={(x) => `#${x}`}
        />
      ) : null}
    </>
  );
}

/** Why the run stopped: the abort's code, and the switch's reason when a switch stopped it. */
function AbortNotice({ abort }: { abort: { reason: string; detail: unknown } }) {
  const detail = (abort.detail ?? {}) as {
    switch?: { scope?: string; target?: string; reason?: string };
    message?: string;
  };
  return (
    <div class="error" role="status" data-abort={abort.reason}>
      <p>
        <strong>Stopped</strong>: {abort.reason}
      </p>
      {detail.switch ? (
        <p>
          Execution is switched off for the {detail.switch.scope} {detail.switch.target ?? ''}:{' '}
          {detail.switch.reason}
        </p>
      ) : detail.message ? (
        <p>{detail.message}</p>
      ) : null}
    </div>
  );
}

export function IntentView({ session, id }: { session: Session; id: string }) {
  const book = useTokens(session);
  const loaded = useLoad(
    () => ok(session.client.api.GET('/v1/intents/{id}', { params: { path: { id } } })),
    [session, id],
    1_000,
  );
  const intent = loaded.data;
  if (!intent)
    return (
      <Page title="Intent">
        <Pending loaded={loaded} />
      </Page>
    );
  const report = intent.report as Report;
  const { buy, sell, text } = pair(intent, book);
  const cancel = async () => {
    await ok(session.client.api.POST('/v1/intents/{id}/cancel', { params: { path: { id } } }));
    loaded.reload();
  };
  return (
    <Page
      title={`Intent ${text}`}
      actions={
        intent.status === 'planned' && session.kind !== 'operator' ? (
          <ActionButton label="Cancel intent" kind="danger" run={cancel} />
        ) : null
      }
    >
      <Facts
        rows={[
          ['Status', <Badge value={intent.status} />],
          ['Id', <code>{intent.id}</code>],
          ['Wallet', <Link to={`/wallets/${intent.wallet}`}>{shortHex(intent.wallet, 6)}</Link>],
          ['Value', formatUsd(intent.params.value_usd)],
          ['Fee', formatUsd(intent.params.fee_usd)],
          ['Policy', `version ${intent.policy_version} (${intent.policy_hash.slice(0, 12)}…)`],
          ['Venues allowed', intent.params.venues.join(', ')],
          [
            'Plan',
            report.plan
              ? `${report.plan.slice_count ?? '?'} slices on ${report.plan.venue ?? '?'}`
              : 'not planned yet',
          ],
          [
            'Filled',
            report.totals
              ? `${formatUnits(report.totals.sold, sell.decimals)} ${sell.symbol} for ${formatUnits(report.totals.bought, buy.decimals)} ${buy.symbol}`
              : '—',
          ],
          ['Created', formatTime(intent.created_at)],
          ['Updated', formatTime(intent.updated_at)],
        ]}
      />
      {intent.params.abort ? <AbortNotice abort={intent.params.abort} /> : null}
      {approvalOf(intent) ? (
        <>
          <h2>Approval</h2>
          <ApprovalPanel session={session} intent={intent} onSigned={loaded.reload} />
        </>
      ) : null}
      <h2>Slices</h2>
      <SliceTimeline intent={intent} book={book} />
      {!FINAL.has(intent.status) ? <p class="muted">Refreshing every second while the intent runs.</p> : null}
      <p>
        <button type="button" class="link" onClick={() => navigate('/intents')}>
          Back to intents
        </button>
      </p>
    </Page>
  );
}
