// The operator's views (signed in with the operator token): execution switches and panics with
// their reasons and who set them, the job queues and their age, the accounts with their caps, and
// security and drift alerts. Reads only, except the switches.

import { useState } from 'preact/hooks';
import { asPurserError, ok, type PurserError, type Session } from '../api.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { Badge, DataTable, Empty, ErrorBox, Link, Page, Pending, useLoad } from '../ui.tsx';

const SCOPES = ['wallet', 'account', 'venue', 'environment'] as const;
type Scope = (typeof SCOPES)[number];

function SwitchForm({ session, onDone }: { session: Session; onDone: () => void }) {
  const [scope, setScope] = useState<Scope>('wallet');
  const [error, setError] = useState<PurserError | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const submit = (e: SubmitEvent) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const enabled = form.get('enabled') === 'on';
    const target = String(form.get('target') ?? '').trim();
    const reason = String(form.get('reason') ?? '').trim();
    setBusy(true);
    setError(null);
    setDone(null);
    ok(
      session.client.api.PUT('/v1/ops/switches', {
        body: {
          scope,
          enabled,
          ...(scope === 'environment' ? {} : { target }),
          ...(reason ? { reason } : {}),
        },
      }),
    ).then(
      () => {
        setBusy(false);
        setDone(
          `Execution switched ${enabled ? 'on' : 'off'} for the ${scope}${target ? ` ${target}` : ''}.`,
        );
        onDone();
      },
      (err: unknown) => {
        setBusy(false);
        setError(asPurserError(err));
      },
    );
  };
  return (
    <form class="card switch-form" onSubmit={submit}>
      <h2>Switch execution</h2>
      <div class="row">
        <label for="switch-scope">
          Scope{' '}
          <select
            id="switch-scope"
            value={scope}
            onChange={(e) => setScope((e.currentTarget as HTMLSelectElement).value as Scope)}
          >
            {SCOPES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        {scope === 'environment' ? null : (
          <label for="switch-target">
            {scope === 'wallet' ? 'Wallet address' : scope === 'account' ? 'Account id' : 'Venue'}{' '}
            <input id="switch-target" name="target" required autocomplete="off" spellcheck={false} />
          </label>
        )}
        <label for="switch-enabled">
          <input id="switch-enabled" name="enabled" type="checkbox" /> Execution on
        </label>
      </div>
      <label for="switch-reason">Reason (shown to callers while it is off; required to switch off)</label>
      <input id="switch-reason" name="reason" maxLength={500} />
      {error ? <ErrorBox error={error} /> : null}
      {done ? (
        <p class="valid" role="status">
          {done}
        </p>
      ) : null}
      <p>
        <button type="submit" class="danger" disabled={busy}>
          {busy ? 'Applying…' : 'Apply'}
        </button>
      </p>
    </form>
  );
}

export function SwitchesView({ session }: { session: Session }) {
  const loaded = useLoad(() => ok(session.client.api.GET('/v1/ops/switches')), [session], 5_000);
  return (
    <Page title="Switches">
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : loaded.data.switches.length === 0 ? (
        <Empty title="Every switch is on">
          Nothing is switched off and no account has panicked. Switch a wallet, account, venue or the whole
          environment off below, with the reason callers will read.
        </Empty>
      ) : (
        <DataTable
          caption="Switched off now, with the reason callers read"
          rows={loaded.data.switches}
          rowKey={(s) => `${s.scope}:${s.target ?? ''}`}
          rowAttrs={(s) => ({ 'data-switch': `${s.scope}:${s.target ?? ''}` })}
          columns={[
            { header: 'Scope', cell: (s) => <Badge value={s.source === 'panic' ? 'panic' : s.scope} /> },
            { header: 'Target', cell: (s) => <code>{s.target ?? 'everything'}</code> },
            { header: 'Reason', cell: (s) => s.reason },
            { header: 'Set by', cell: (s) => s.set_by },
            { header: 'Since', cell: (s) => formatTime(s.set_at) },
          ]}
        />
      )}
      <SwitchForm session={session} onDone={loaded.reload} />
    </Page>
  );
}

export function QueuesView({ session }: { session: Session }) {
  const loaded = useLoad(() => ok(session.client.api.GET('/v1/ops/queues')), [session], 5_000);
  return (
    <Page title="Job queues">
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : loaded.data.queues.length === 0 ? (
        <Empty title="No queue has work">No job is due, scheduled, running or failed in the last day.</Empty>
      ) : (
        <DataTable
          caption={`As of ${formatTime(loaded.data.as_of)}, refreshed every 5 seconds`}
          rows={loaded.data.queues}
          rowKey={(q) => q.name}
          rowAttrs={(q) => ({ 'data-queue': q.name })}
          columns={[
            { header: 'Job', rowHeader: true, cell: (q) => <code>{q.name}</code> },
            { header: 'Due', num: true, cell: (q) => q.waiting },
            {
              header: 'Oldest due (s)',
              num: true,
              cell: (q) => (q.oldest_waiting_seconds === null ? '—' : q.oldest_waiting_seconds.toFixed(1)),
            },
            { header: 'Scheduled', num: true, cell: (q) => q.scheduled },
            { header: 'Running', num: true, cell: (q) => q.running },
            { header: 'Failed (24 h)', num: true, cell: (q) => q.failed_last_day },
          ]}
        />
      )}
    </Page>
  );
}

export function AccountsView({ session, cursor }: { session: Session; cursor: string | null }) {
  const loaded = useLoad(
    () =>
      ok(
        session.client.api.GET('/v1/ops/accounts', {
          params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [session, cursor],
  );
  return (
    <Page title="Accounts">
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : loaded.data.accounts.length === 0 ? (
        <Empty title="No accounts yet">An account is made when a wallet first signs in.</Empty>
      ) : (
        <>
          <DataTable
            caption="Newest first"
            rows={loaded.data.accounts}
            rowKey={(a) => a.id}
            rowAttrs={(a) => ({ 'data-account': a.id, 'data-address': a.address.toLowerCase() })}
            columns={[
              {
                header: 'Account',
                cell: (a) => (
                  <>
                    <code>{a.id}</code>
                    {a.offboarded_at ? ' (offboarded)' : ''}
                  </>
                ),
              },
              { header: 'Wallet', cell: (a) => <code title={a.address}>{shortHex(a.address)}</code> },
              { header: 'Prepaid balance', num: true, cell: (a) => formatUsd(a.prepaid_balance_usd) },
              {
                header: 'Own cap',
                num: true,
                cell: (a) => (a.prepaid_cap_usd === null ? 'default' : formatUsd(a.prepaid_cap_usd)),
              },
              { header: 'Created', cell: (a) => formatTime(a.created_at) },
            ]}
          />
          <nav class="pager" aria-label="Pages of accounts">
            {cursor ? <Link to="/ops/accounts">First page</Link> : null}
            {loaded.data.next_cursor ? (
              <Link to={`/ops/accounts?cursor=${loaded.data.next_cursor}`}>Older</Link>
            ) : null}
          </nav>
        </>
      )}
    </Page>
  );
}

export function AlertsView({ session }: { session: Session }) {
  const loaded = useLoad(() => ok(session.client.api.GET('/v1/ops/alerts')), [session], 10_000);
  return (
    <Page title="Alerts">
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : loaded.data.alerts.length === 0 ? (
        <Empty title="No alerts">
          No security alert in the last 7 days and no unresolved difference between books and chain.
        </Empty>
      ) : (
        <>
          <p class="muted">
            {loaded.data.counts.security} security alerts in the last 7 days, {loaded.data.counts.drift}{' '}
            unresolved drifts.
          </p>
          <ul class="cards alerts">
            {loaded.data.alerts.map((a) => (
              <li key={a.id} class="card" data-alert={a.id}>
                <p>
                  <Badge value={a.severity} /> <strong>{a.kind}</strong> · account <code>{a.account_id}</code>{' '}
                  · {formatTime(a.raised_at)}
                </p>
                <p>{a.summary}</p>
                <p class="muted">{a.remediation}</p>
              </li>
            ))}
          </ul>
        </>
      )}
    </Page>
  );
}
