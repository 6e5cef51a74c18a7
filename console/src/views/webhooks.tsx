// Webhooks: where the account's events are delivered, a signed test event sent on demand, and the
// deliveries that failed every retry (dead letters), newest first.

import { useState } from 'preact/hooks';
import { ok, PurserError, type Session } from '../api.ts';
import { formatTime } from '../format.ts';
import { ActionButton, Badge, DataTable, Empty, Facts, Page, Pending, useLoad } from '../ui.tsx';

interface TestReport {
  event_id: string;
  url: string;
  delivered: boolean;
  status: number | null;
  error: string | null;
  signed_at: string;
}

/** The registered endpoint, or null when none is (the API answers 404 NOT_FOUND). */
async function endpoint(session: Session): Promise<{ url: string } | null> {
  try {
    return await ok(session.client.api.GET('/v1/webhooks/endpoint'));
  } catch (err) {
    if (err instanceof PurserError && err.status === 404) return null;
    throw err;
  }
}

export function WebhooksView({ session }: { session: Session }) {
  const registered = useLoad(() => endpoint(session), [session], 10_000);
  const failures = useLoad(
    () => ok(session.client.api.GET('/v1/webhooks/failures', { params: { query: { limit: 100 } } })),
    [session],
    10_000,
  );
  const [report, setReport] = useState<TestReport | null>(null);
  const sendTest = async () => {
    setReport(null);
    const sent = await ok(session.client.api.POST('/v1/webhooks/test'));
    setReport(sent as TestReport);
  };
  return (
    <Page title="Webhooks">
      <h2>Endpoint</h2>
      {registered.loading && !registered.data ? (
        <Pending loaded={registered} />
      ) : registered.error ? (
        <Pending loaded={registered} />
      ) : !registered.data ? (
        <Empty title="No webhook endpoint registered">
          Events are delivered, signed, to one URL of yours: register it with{' '}
          <code>PUT /v1/webhooks/endpoint</code> and a body <code>{'{"url": "https://…"}'}</code>, then read
          the signing secret with <code>GET /v1/webhooks/secret</code> (docs/events.md says how to check a
          signature). It shows here once registered.
        </Empty>
      ) : (
        <>
          <Facts
            rows={[
              ['Delivered to', <code data-field="endpoint">{registered.data.url}</code>],
              [
                'Signed with',
                <span>
                  the account's secret (<code>GET /v1/webhooks/secret</code>)
                </span>,
              ],
            ]}
          />
          <ActionButton label="Send a test event" kind="primary" run={sendTest} />
          {report ? (
            <div
              class={report.delivered ? 'notice' : 'error'}
              role="status"
              data-test-delivery={report.delivered ? 'delivered' : 'failed'}
            >
              <p>
                <Badge value={report.delivered ? 'delivered' : 'failed'} /> Test event{' '}
                <code>{report.event_id}</code> to <code>{report.url}</code>:{' '}
                {report.status !== null ? `answered HTTP ${report.status}` : 'no answer'}
                {report.error ? ` (${report.error})` : ''}, signed {formatTime(report.signed_at)}.
              </p>
              {!report.delivered ? (
                <p>
                  A test event is not retried: fix the endpoint so that it answers 2xx, then send another.
                </p>
              ) : null}
            </div>
          ) : null}
        </>
      )}
      <h2>Dead letters</h2>
      {!failures.data ? (
        <Pending loaded={failures} />
      ) : failures.data.failures.length === 0 ? (
        <Empty title="No failed deliveries">
          A delivery the endpoint does not accept is retried with backoff; one that fails every attempt shows
          here with its last answer and body. Every event can also be read with <code>GET /v1/events</code>.
        </Empty>
      ) : (
        <DataTable
          name="failures"
          caption="Deliveries that failed every attempt, most recent first"
          rows={failures.data.failures}
          rowKey={(f) => String(f.id)}
          rowAttrs={(f) => ({ 'data-failure': String(f.id) })}
          columns={[
            { header: 'Dead since', cell: (f) => formatTime(f.dead_at) },
            { header: 'Event', cell: (f) => <code>{f.event_id}</code> },
            { header: 'Kind', cell: (f) => f.kind },
            { header: 'Attempts', num: true, cell: (f) => f.attempts },
            {
              header: 'Last answer',
              cell: (f) => f.last_error ?? (f.last_status !== null ? `HTTP ${f.last_status}` : '—'),
            },
            { header: 'First attempt', cell: (f) => formatTime(f.first_attempt_at) },
          ]}
        />
      )}
    </Page>
  );
}
