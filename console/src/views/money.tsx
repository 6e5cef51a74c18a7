// Money: the prepaid balance fees are debited from, its top-ups and fees (from the events feed),
// the fee schedule, and a wallet's statement for a month or a day, downloaded as JSON or CSV.
// Downloads go through the API client with the session's Bearer token (there are no cookies) and
// reach the user as a Blob's object URL on an <a download>.

import { useState } from 'preact/hooks';
import { ok, type Session } from '../api.ts';
import { field, recentEvents, type FeedEvent } from '../events.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { ActionButton, Badge, DataTable, Empty, Facts, Link, Page, Pending, useLoad } from '../ui.tsx';
import { accountWallets } from './wallets.tsx';

const MONEY_KINDS = new Set(['balance.credited', 'balance.debited']);

export function MoneyView({ session }: { session: Session }) {
  const { api } = session.client;
  const balance = useLoad(() => ok(api.GET('/v1/balance')), [session], 10_000);
  const fees = useLoad(() => ok(api.GET('/v1/fees')), [session]);
  const events = useLoad(() => recentEvents(session, (k) => MONEY_KINDS.has(k)), [session], 10_000);
  return (
    <Page title="Money">
      <h2>Prepaid balance</h2>
      {balance.data ? (
        <p class="big-figure">
          <span data-field="balance" data-usd={balance.data.balance_usd}>
            {formatUsd(balance.data.balance_usd)}
          </span>{' '}
          <span class="muted">{balance.data.currency}, from which metered fees are debited</span>
        </p>
      ) : (
        <Pending loaded={balance} />
      )}
      <p class="muted">
        Top up with <code>GET /v1/balance/topups/terms</code>, then <code>POST /v1/balance/topups</code> with
        a signed USDC authorization (the SDK's <code>signTopUp</code>).
      </p>
      {events.data ? (
        <MoneyEvents events={events.data.events} complete={events.data.complete} />
      ) : (
        <Pending loaded={events} />
      )}
      <h2>Fee schedule</h2>
      {fees.data ? (
        <Facts
          rows={[
            ['Per conversion intent', formatUsd(fees.data.fees.conversion_intent.per_intent_usd)],
            [
              'Per prediction-market order',
              `${formatUsd(fees.data.fees.pm_order.base_usd)} + ${fees.data.fees.pm_order.bps} bps of its cost`,
            ],
            ['Per feature request', formatUsd(fees.data.fees.feedback.per_request_usd)],
            ['Metering', <Badge value={fees.data.metering_enforced ? 'enforced' : 'off'} />],
          ]}
        />
      ) : (
        <Pending loaded={fees} />
      )}
      <h2>Statements</h2>
      <StatementDownload session={session} />
    </Page>
  );
}

function MoneyEvents({ events, complete }: { events: FeedEvent[]; complete: boolean }) {
  const topUps = events.filter((e) => e.kind === 'balance.credited');
  const debits = events.filter((e) => e.kind === 'balance.debited');
  const reach = complete ? "all the account's events" : 'the latest 600 events';
  return (
    <>
      <h2>Top-ups</h2>
      {topUps.length === 0 ? (
        <Empty title="No top-up yet">
          A top-up settles on chain and is credited here; until then fees cannot be paid when metering is
          enforced.
        </Empty>
      ) : (
        <DataTable
          name="topups"
          caption={`Credits of the prepaid balance, newest first (${reach})`}
          rows={topUps}
          rowKey={(e) => e.id}
          rowAttrs={(e) => ({ 'data-event': e.id })}
          columns={[
            { header: 'When', cell: (e) => formatTime(e.created_at) },
            { header: 'Source', cell: (e) => field(e, 'source') },
            { header: 'Amount', num: true, cell: (e) => formatUsd(field(e, 'value_usd')) },
            { header: 'Balance after', num: true, cell: (e) => formatUsd(field(e, 'balance_usd')) },
            { header: 'Payer', cell: (e) => <code>{shortHex(field(e, 'payer'))}</code> },
            {
              header: 'Transaction',
              cell: (e) => <code title={field(e, 'tx_hash')}>{shortHex(field(e, 'tx_hash'))}</code>,
            },
          ]}
        />
      )}
      <h2>Fees charged</h2>
      {debits.length === 0 ? (
        <Empty title="No fee charged yet">
          Fees are debited when an agent admits a conversion (<code>POST /v1/intents</code>) or places a
          prediction-market order; each shows here.
        </Empty>
      ) : (
        <DataTable
          name="fees"
          caption={`Debits of the prepaid balance, newest first (${reach})`}
          rows={debits}
          rowKey={(e) => e.id}
          rowAttrs={(e) => ({ 'data-event': e.id })}
          columns={[
            { header: 'When', cell: (e) => formatTime(e.created_at) },
            { header: 'Product', cell: (e) => field(e, 'product') },
            { header: 'Fee', num: true, cell: (e) => formatUsd(field(e, 'fee_usd')) },
            { header: 'Wallet', cell: (e) => <code>{shortHex(field(e, 'wallet'))}</code> },
          ]}
        />
      )}
    </>
  );
}

/** Offers bytes to the user as a file: an object URL on a clicked <a download>, then let go. */
function offerDownload(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

function StatementDownload({ session }: { session: Session }) {
  const wallets = useLoad(() => accountWallets(session), [session]);
  const [chosen, setChosen] = useState<string | null>(null);
  const [span, setSpan] = useState<'month' | 'day'>('month');
  const [month, setMonth] = useState(thisMonth());
  const [day, setDay] = useState(new Date().toISOString().slice(0, 10));
  const [done, setDone] = useState<string | null>(null);
  if (!wallets.data) return <Pending loaded={wallets} />;
  if (wallets.data.length === 0)
    return (
      <Empty title="No wallet to make a statement of">
        Statements cover a wallet's ledger: publish a policy for your agent's wallet (
        <Link to="/policies">Policies</Link>) and it can be picked here.
      </Empty>
    );
  const wallet = chosen ?? wallets.data[0]!;
  const period = span === 'month' ? month : day;
  const valid = span === 'month' ? /^\d{4}-\d{2}$/.test(period) : /^\d{4}-\d{2}-\d{2}$/.test(period);
  const download = (format: 'json' | 'csv') => async () => {
    setDone(null);
    const { api } = session.client;
    const query = { wallet, period, format };
    let blob: Blob;
    let hash: string | null;
    if (format === 'csv') {
      const call = api.GET('/v1/statements', { params: { query }, parseAs: 'blob' });
      blob = await ok(call);
      hash = (await call).response.headers.get('x-content-hash');
    } else {
      // The JSON answer is the statement's summary; the export itself is stored and fetched by hash.
      const summary = await ok(api.GET('/v1/statements', { params: { query } }));
      if (typeof summary !== 'object') throw new Error('The statement answered no JSON summary.');
      hash = summary.content_hash;
      blob = await ok(
        api.GET('/v1/statements/exports/{content_hash}', {
          params: { path: { content_hash: summary.content_hash } },
          parseAs: 'blob',
        }),
      );
    }
    const name = `statement-${wallet}-${period}.${format}`;
    offerDownload(blob, name);
    setDone(`Downloaded ${name} (${blob.size} bytes${hash ? `, ${hash}` : ''}).`);
  };
  return (
    <div class="statement">
      <p class="muted">
        A wallet's ledger movements, balances and fees for a UTC month or day (<code>GET /v1/statements</code>
        ); the same period over the same ledger always gives the same bytes.
      </p>
      <div class="row">
        <label for="statement-wallet">
          Wallet{' '}
          <select
            id="statement-wallet"
            value={wallet}
            onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value)}
          >
            {wallets.data.map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </label>
        <label for="statement-span">
          Period{' '}
          <select
            id="statement-span"
            value={span}
            onChange={(e) => setSpan((e.currentTarget as HTMLSelectElement).value as 'month' | 'day')}
          >
            <option value="month">a month</option>
            <option value="day">a day</option>
          </select>
        </label>
        {span === 'month' ? (
          <label for="statement-month">
            Month (UTC){' '}
            <input
              id="statement-month"
              type="month"
              value={month}
              onInput={(e) => setMonth((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
        ) : (
          <label for="statement-day">
            Day (UTC){' '}
            <input
              id="statement-day"
              type="date"
              value={day}
              onInput={(e) => setDay((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
        )}
      </div>
      <div class="row buttons">
        <ActionButton label="Download JSON" run={download('json')} disabled={!valid} />
        <ActionButton label="Download CSV" kind="primary" run={download('csv')} disabled={!valid} />
      </div>
      {!valid ? <p class="invalid">Pick a {span} first.</p> : null}
      {done ? (
        <p class="valid" role="status">
          {done}
        </p>
      ) : null}
    </div>
  );
}
