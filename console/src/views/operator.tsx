// The operator's views (signed in with the operator token): execution switches and panics with
// their reasons and who set them, the job queues and their age, the accounts with their caps, and
// security and drift alerts. Reads only, except the switches.

import { useState } from 'preact/hooks';
import { asPurserError, ok, type PurserError, type Session } from '../api.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { Badge, Empty, ErrorBox, Link, Page, Pending, useLoad } from '../ui.tsx';

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
        <div class="table-wrap">
          <table>
            <caption>Switched off now, with the reason callers read</caption>
            <thead>
              <tr>
                <th scope="col">Scope</th>
                <th scope="col">Target</th>
                <th scope="col">Reason</th>
                <th scope="col">Set by</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {loaded.data.switches.map((s) => (
                <tr key={`${s.scope}:${s.target ?? ''}`} data-switch={`${s.scope}:${s.target ?? ''}`}>
                  <td>
                    <Badge value={s.source === 'panic' ? 'panic' : s.scope} />
                  </td>
                  <td>
                    <code>{s.target ?? 'everything'}</code>
                  </td>
                  <td>{s.reason}</td>
                  <td>{s.set_by}</td>
                  <td>{formatTime(s.set_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
        <div class="table-wrap">
          <table>
            <caption>As of {formatTime(loaded.data.as_of)}, refreshed every 5 seconds</caption>
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col" class="num">
                  Due
                </th>
                <th scope="col" class="num">
                  Oldest due (s)
                </th>
                <th scope="col" class="num">
                  Scheduled
                </th>
                <th scope="col" class="num">
                  Running
                </th>
                <th scope="col" class="num">
                  Failed (24 h)
                </th>
              </tr>
            </thead>
            <tbody>
              {loaded.data.queues.map((q) => (
                <tr key={q.name} data-queue={q.name}>
                  <th scope="row">
                    <code>{q.name}</code>
                  </th>
                  <td class="num">{q.waiting}</td>
                  <td class="num">
                    {q.oldest_waiting_seconds === null ? '—' : q.oldest_waiting_seconds.toFixed(1)}
                  </td>
                  <td class="num">{q.scheduled}</td>
                  <td class="num">{q.running}</td>
                  <td class="num">{q.failed_last_day}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
          <div class="table-wrap">
            <table>
              <caption>Newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Wallet</th>
                  <th scope="col" class="num">
                    Prepaid balance
                  </th>
                  <th scope="col" class="num">
                    Own cap
                  </th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {loaded.data.accounts.map((a) => (
                  <tr key={a.id} data-account={a.id} data-address={a.address.toLowerCase()}>
                    <td>
                      <code>{a.id}</code>
                      {a.offboarded_at ? ' (offboarded)' : ''}
                    </td>
                    <td>
                      <code title={a.address}>{shortHex(a.address)}</code>
                    </td>
                    <td class="num">{formatUsd(a.prepaid_balance_usd)}</td>
                    <td class="num">
                      {a.prepaid_cap_usd === null ? 'default' : formatUsd(a.prepaid_cap_usd)}
                    </td>
                    <td>{formatTime(a.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
