// Delegations: each session-key grant of the account with its state and expiry; revoking one stops
// the executor at once and shows the calls the owner signs to remove it from the smart account.

import { useState } from 'preact/hooks';
import { ok, type Schemas, type Session } from '../api.ts';
import { formatTime, shortHex } from '../format.ts';
import { ActionButton, Badge, Empty, Facts, Page, Pending, useLoad } from '../ui.tsx';

type Revocation = Schemas['DelegationRevocation'];

function expiry(validUntil: string | null | undefined, now: number): string {
  if (!validUntil) return '—';
  const left = Date.parse(validUntil) - now;
  if (left <= 0) return `expired ${formatTime(validUntil)}`;
  const hours = Math.floor(left / 3_600_000);
  return `${formatTime(validUntil)} (in ${hours >= 48 ? `${Math.floor(hours / 24)} days` : `${hours} h`})`;
}

function UnwindCalls({ revocation }: { revocation: Revocation }) {
  const r = revocation.revocation;
  const calls = [
    ['Uninstall the permission', r.uninstall_call],
    ['Invalidate the enabling nonce', r.invalidate_nonce_call],
  ] as const;
  return (
    <div class="card" role="status" data-revoked={revocation.id}>
      <p>
        <strong>Revoked.</strong> The executor stopped using this delegation. To remove it from the smart
        account too, the owner sends these calls from the account:
      </p>
      <ol>
        {calls.map(([what, call]) =>
          call ? (
            <li key={what}>
              {what}: to <code>{call.to}</code>
              <br />
              data{' '}
              <code class="calldata" tabIndex={0} aria-label={`${what}: call data`}>
                {call.data}
              </code>
            </li>
          ) : null,
        )}
      </ol>
      {r.note ? <p class="muted">{r.note}</p> : null}
    </div>
  );
}

export function DelegationsView({ session }: { session: Session }) {
  const loaded = useLoad(
    () => ok(session.client.api.GET('/v1/delegations', { params: { query: { limit: 100 } } })),
    [session],
  );
  const [revoked, setRevoked] = useState<Revocation | null>(null);
  const now = Date.now();
  const revoke = (id: string) => async () => {
    if (!confirm('Revoke this delegation? The executor stops using it at once.')) return;
    const result = await ok(session.client.api.DELETE('/v1/delegations/{id}', { params: { path: { id } } }));
    setRevoked(result);
    loaded.reload();
  };
  return (
    <Page title="Delegations">
      {revoked ? <UnwindCalls revocation={revoked} /> : null}
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : loaded.data.delegations.length === 0 ? (
        <Empty title="No delegations yet">
          The executor needs a session key on your smart account to act for it: prepare one with{' '}
          <code>POST /v1/delegations/prepare</code>, sign its digest with the owner, and confirm it.
        </Empty>
      ) : (
        <ul class="cards">
          {loaded.data.delegations.map((d) => (
            <li key={d.id} class="card" data-delegation={d.id} data-status={d.status}>
              <Facts
                rows={[
                  ['State', <Badge value={d.status} />],
                  ['Smart account', <code>{shortHex(d.account, 6)}</code>],
                  ['Chain', String(d.chain_id)],
                  ['Valid until', expiry(d.valid_until, now)],
                  ['Calls', `${d.scope.calls.length} allowed`],
                  ['Confirmed', formatTime(d.confirmed_at)],
                ]}
              />
              {d.status === 'active' || d.status === 'prepared' ? (
                <ActionButton label="Revoke" kind="danger" run={revoke(d.id)} />
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
