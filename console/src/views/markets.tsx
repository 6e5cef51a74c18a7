// Prediction markets: the account's venue credentials (metadata only: the secret material never
// leaves the service), each credential's resting orders as the venue reports them, and the orders
// and fills Purser recorded (pm.* events). The public API lists no positions; fills journaled to
// the ledger show in the wallet's books and statements.

import { ok, type Session } from '../api.ts';
import { field, recentEvents } from '../events.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { Badge, Empty, Facts, Page, Pending, useLoad } from '../ui.tsx';

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
          <div class="table-wrap">
            <table data-table="pm-events">
              <caption>
                Prediction-market events, newest first (
                {events.data.complete ? "all the account's events" : 'within the latest 600 events'})
              </caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Order</th>
                  <th scope="col">Side</th>
                  <th scope="col" class="num">
                    Price
                  </th>
                  <th scope="col" class="num">
                    Size
                  </th>
                  <th scope="col">Wallet</th>
                </tr>
              </thead>
              <tbody>
                {events.data.events.map((e) => (
                  <tr key={e.id} data-event={e.id} data-kind={e.kind}>
                    <td>{formatTime(e.created_at)}</td>
                    <td>{e.kind.replace(/^pm\./, '')}</td>
                    <td>
                      <code title={field(e, 'order_id')}>{shortHex(field(e, 'order_id'))}</code>
                    </td>
                    <td>{field(e, 'side')}</td>
                    <td class="num">{e.data['price_usd'] ? formatUsd(field(e, 'price_usd')) : '—'}</td>
                    <td class="num">{field(e, 'size_shares')}</td>
                    <td>
                      <code>{shortHex(field(e, 'wallet'))}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
    <div class="table-wrap">
      <table>
        <caption>Resting orders, as the venue reports them</caption>
        <thead>
          <tr>
            <th scope="col">Outcome</th>
            <th scope="col">Side</th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Matched / size
            </th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {orders.data.orders.map((o) => (
            <tr key={o.order_id} data-order={o.order_id}>
              <td>{o.outcome}</td>
              <td>{o.side}</td>
              <td class="num">{formatUsd(o.price_usd)}</td>
              <td class="num">
                {o.matched_size_shares} / {o.original_size_shares}
              </td>
              <td>{o.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
