// Prediction markets: the account's venue credentials (metadata only: the secret material never
// leaves the service), each credential's resting orders as the venue reports them, and the orders
// and fills Purser recorded (pm.* events). The public API lists no positions; fills journaled to
// the ledger show in the wallet's books and statements.

import { ok, type Session } from '../api.ts';
import { field, recentEvents } from '../events.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { Badge, DataTable, Empty, Facts, Page, Pending, useLoad } from '../ui.tsx';

/** The account's credentials, revoked ones too (metadata only). */
function loadCredentials(session: Session) {
  return ok(
    session.client.api.GET('/v1/pm/credentials', {
      params: { query: { limit: 200, include_revoked: true } },
    }),
  );
}

type Credential = Awaited<ReturnType<typeof loadCredentials>>['credentials'][number];

export function MarketsView({ session }: { session: Session }) {
  const credentials = useLoad(() => loadCredentials(session), [session]);
  const events = useLoad(() => recentEvents(session, (k) => k.startsWith('pm.')), [session], 10_000);
  return (
    <Page title="Markets">
      <h2>Venue credentials</h2>
      {!credentials.data ? (
        <Pending loaded={credentials} />
      ) : credentials.data.credentials.length === 0 ? (
        <Empty title="No venue credential yet">
          An agent trades on a prediction market with a credential of its venue: store one with{' '}
          <code>POST /v1/pm/credentials</code> (checked against the venue, sealed at rest), after{' '}
          <code>GET /v1/pm/onboarding/{'{address}'}</code> shows what the wallet still lacks. Orders are then
          placed with <code>POST /v1/pm/orders</code> under the wallet's policy.
        </Empty>
      ) : (
        <ul class="cards">
          {credentials.data.credentials.map((c) => (
            <li key={c.id} class="card" data-credential={c.id}>
              <CredentialCard session={session} credential={c} />
            </li>
          ))}
        </ul>
      )}
      <section data-section="pm-events" aria-labelledby="pm-events-title">
        <h2 id="pm-events-title">Orders and fills recorded</h2>
        <p class="muted">
          The public API lists no orders or positions of its own: these are the <code>pm.*</code> events of{' '}
          <code>GET /v1/events</code> (an order placed or cancelled, a fill journaled), newest first. The
          venue's resting orders are listed per credential above.
        </p>
        {!events.data ? (
          <Pending loaded={events} />
        ) : events.data.events.length === 0 ? (
          <Empty title="No prediction-market order yet">
            Orders placed with <code>POST /v1/pm/orders</code> (or prepared and submitted by the client) and
            fills synced with <code>POST /v1/pm/fills/sync</code> show here.
          </Empty>
        ) : (
          <DataTable
            name="pm-events"
            caption={`Prediction-market events, newest first (${
              events.data.complete ? "all the account's events" : 'within the latest 600 events'
            })`}
            rows={events.data.events}
            rowKey={(e) => e.id}
            rowAttrs={(e) => ({ 'data-event': e.id, 'data-kind': e.kind })}
            columns={[
              { header: 'When', cell: (e) => formatTime(e.created_at) },
              { header: 'Event', cell: (e) => e.kind.replace(/^pm\./, '') },
              {
                header: 'Order',
                cell: (e) => <code title={field(e, 'order_id')}>{shortHex(field(e, 'order_id'))}</code>,
              },
              { header: 'Side', cell: (e) => field(e, 'side') },
              {
                header: 'Price',
                num: true,
                cell: (e) => (e.data['price_usd'] ? formatUsd(field(e, 'price_usd')) : '—'),
              },
              { header: 'Size', num: true, cell: (e) => field(e, 'size_shares') },
              { header: 'Wallet', cell: (e) => <code>{shortHex(field(e, 'wallet'))}</code> },
            ]}
          />
        )}
      </section>
    </Page>
  );
}

function CredentialCard({ session, credential }: { session: Session; credential: Credential }) {
  const meta: Record<string, unknown> = credential.meta ?? {};
  const text = (key: string) => (typeof meta[key] === 'string' ? (meta[key] as string) : '—');
  return (
    <>
      <p>
        <strong>{credential.label || credential.venue}</strong>{' '}
        <Badge value={credential.revoked_at ? 'revoked' : 'active'} />
      </p>
      <Facts
        rows={[
          ['Venue', credential.venue],
          ['Flow', text('flow')],
          ['Signer', <code>{shortHex(text('signer_address'))}</code>],
          ['Funder', <code>{shortHex(text('funder'))}</code>],
          ['API key', text('api_key_hint')],
          ['Last used', formatTime(text('last_used_at') === '—' ? null : text('last_used_at'))],
          ['Stored', formatTime(credential.created_at)],
        ]}
      />
      {credential.revoked_at ? (
        <p class="muted">Revoked {formatTime(credential.revoked_at)}.</p>
      ) : (
        <RestingOrders session={session} id={credential.id} />
      )}
    </>
  );
}

function RestingOrders({ session, id }: { session: Session; id: string }) {
  const orders = useLoad(
    () => ok(session.client.api.GET('/v1/pm/orders', { params: { query: { credential_id: id } } })),
    [session, id],
  );
  if (!orders.data) return <Pending loaded={orders} />;
  if (orders.data.orders.length === 0) return <p class="muted">No resting order at the venue.</p>;
  return (
    <DataTable
      caption="Resting orders, as the venue reports them"
      rows={orders.data.orders}
      rowKey={(o) => o.order_id}
      rowAttrs={(o) => ({ 'data-order': o.order_id })}
      columns={[
        { header: 'Outcome', cell: (o) => o.outcome },
        { header: 'Side', cell: (o) => o.side },
        { header: 'Price', num: true, cell: (o) => formatUsd(o.price_usd) },
        {
          header: 'Matched / size',
          num: true,
          cell: (o) => `${o.matched_size_shares} / ${o.original_size_shares}`,
        },
        { header: 'Status', cell: (o) => o.status },
      ]}
    />
  );
}
