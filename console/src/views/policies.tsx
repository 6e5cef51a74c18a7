// Policies: each wallet's versions, a readable diff between any two, and a new version published
// from a form that is checked against the service's own schema before it is sent.

import { useMemo, useState } from 'preact/hooks';
import { asPurserError, ok, type PurserError, type Schemas, type Session } from '../api.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { checkSchema, diffDocuments, type Change, type Json, type JsonSchema } from '../json.ts';
import { navigate } from '../router.ts';
import { DataTable, Empty, ErrorBox, Link, Page, Pending, useLoad } from '../ui.tsx';

type PolicyRecord = Schemas['PolicyRecord'];

const schemas = new WeakMap<Session, Promise<JsonSchema>>();

/** The request body schema of PUT /v1/policies, as this service publishes it. */
function policySchema(session: Session): Promise<JsonSchema> {
  let schema = schemas.get(session);
  if (!schema) {
    schema = ok(session.client.api.GET('/v1/openapi.json')).then((doc) => {
      const paths = (doc as { paths: Record<string, Record<string, unknown>> }).paths;
      const put = paths['/v1/policies']?.['put'] as {
        requestBody: { content: Record<string, { schema: JsonSchema }> };
      };
      return put.requestBody.content['application/json']!.schema;
    });
    schemas.set(session, schema);
  }
  return schema;
}

export function PoliciesView({ session }: { session: Session }) {
  const loaded = useLoad(
    () => ok(session.client.api.GET('/v1/policies', { params: { query: { limit: 100 } } })),
    [session],
  );
  const latest = new Map<string, PolicyRecord>();
  for (const p of loaded.data?.policies ?? []) if (!latest.has(p.wallet)) latest.set(p.wallet, p);
  return (
    <Page title="Policies">
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : latest.size === 0 ? (
        <Empty title="No policy yet">
          A wallet needs a policy before its agent can spend: publish one below for your agent's smart
          account.
        </Empty>
      ) : (
        <DataTable
          caption="The latest version of each wallet's policy"
          rows={[...latest.values()]}
          rowKey={(p) => p.wallet}
          columns={[
            {
              header: 'Wallet',
              cell: (p) => (
                <Link to={`/policies/${p.wallet}`}>
                  <code>{shortHex(p.wallet, 6)}</code>
                </Link>
              ),
            },
            { header: 'Version', num: true, cell: (p) => p.version },
            { header: 'Per action', cell: (p) => formatUsd(p.document.spend.per_tx_usd) },
            { header: 'Per day', cell: (p) => formatUsd(p.document.spend.daily_usd) },
            { header: 'Approvals', cell: (p) => approvalsText(p.document.spend.approvals) },
            { header: 'Published', cell: (p) => formatTime(p.created_at) },
          ]}
        />
      )}
      <h2>Publish a policy for a new wallet</h2>
      <PolicyForm session={session} current={null} onPublished={(p) => navigate(`/policies/${p.wallet}`)} />
    </Page>
  );
}

export function PolicyView({ session, wallet }: { session: Session; wallet: string }) {
  const loaded = useLoad(
    () => ok(session.client.api.GET('/v1/policies', { params: { query: { wallet, limit: 100 } } })),
    [session, wallet],
  );
  const versions = loaded.data?.policies ?? [];
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <Page title={`Policy of ${shortHex(wallet, 6)}`}>
      {notice ? (
        <p class="valid" role="status">
          {notice}
        </p>
      ) : null}
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : versions.length === 0 ? (
        <Empty title="This wallet has no policy">Publish its first version below.</Empty>
      ) : (
        <>
          <ol class="versions" reversed>
            {versions.map((v) => (
              <li key={v.version}>
                Version {v.version}, published {formatTime(v.created_at)} —{' '}
                <code>{v.hash.slice(0, 16)}…</code>
              </li>
            ))}
          </ol>
          {versions.length > 1 ? <VersionDiff versions={versions} /> : null}
        </>
      )}
      <h2>Publish a new version</h2>
      {loaded.data ? (
        <PolicyForm
          key={versions[0]?.version ?? 0}
          session={session}
          current={versions[0] ?? null}
          wallet={wallet}
          onPublished={(record) => {
            setNotice(publishedNotice(record));
            loaded.reload();
          }}
        />
      ) : null}
    </Page>
  );
}

function VersionDiff({ versions }: { versions: PolicyRecord[] }) {
  const [from, setFrom] = useState(versions[1]!.version);
  const [to, setTo] = useState(versions[0]!.version);
  const a = versions.find((v) => v.version === from);
  const b = versions.find((v) => v.version === to);
  const changes = a && b ? diffDocuments(a.document as Json, b.document as Json) : [];
  const picker = (id: string, label: string, value: number, set: (v: number) => void) => (
    <label for={id}>
      {label}{' '}
      <select
        id={id}
        value={value}
        onChange={(e) => set(Number((e.currentTarget as HTMLSelectElement).value))}
      >
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            version {v.version}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div class="diff-box">
      <h2>Compare versions</h2>
      <div class="row">
        {picker('diff-from', 'From', from, setFrom)}
        {picker('diff-to', 'to', to, setTo)}
      </div>
      <ChangeList changes={changes} />
    </div>
  );
}

const show = (v: Json | undefined) => (v === undefined ? '' : JSON.stringify(v));

export function ChangeList({ changes }: { changes: Change[] }) {
  if (changes.length === 0) return <p class="muted">The two documents are the same.</p>;
  return (
    <div class="table-wrap">
      <table class="diff">
        <caption>What changed, field by field</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.path} class={`diff-${c.kind}`} data-path={c.path}>
              <th scope="row">
                <code>{c.path}</code> <span class="muted">({c.kind})</span>
              </th>
              <td>
                <code>{show(c.before)}</code>
              </td>
              <td>
                <code>{show(c.after)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A policy's approval tier in words: `2 of 3 above $50.00`, or none. */
function approvalsText(approvals: { above_usd: string; approvers: string[]; quorum: number } | undefined) {
  return approvals
    ? `${approvals.quorum} of ${approvals.approvers.length} above ${formatUsd(approvals.above_usd)}`
    : 'none';
}

function publishedNotice(record: PolicyRecord): string {
  return record.unchanged
    ? `Nothing changed: version ${record.version} stays the latest.`
    : `Published version ${record.version}.`;
}

function starter(wallet: string | undefined): Json {
  return {
    version: 1,
    wallet: wallet ?? '0x…',
    chain_id: 8453,
    execution: { max_slippage_bps: 50 },
    spend: { per_tx_usd: '100', daily_usd: '1000', token_allowlist: ['USDC', 'WETH'] },
  };
}

function PolicyForm(props: {
  session: Session;
  current: PolicyRecord | null;
  wallet?: string;
  onPublished: (p: PolicyRecord) => void;
}) {
  const initial = JSON.stringify(props.current ? props.current.document : starter(props.wallet), null, 2);
  const [text, setText] = useState(initial);
  const [error, setError] = useState<PurserError | null>(null);
  const [busy, setBusy] = useState(false);
  const schema = useLoad(() => policySchema(props.session), [props.session]);

  const parsed = useMemo((): { value: Json } | { problem: string } => {
    try {
      return { value: JSON.parse(text) as Json };
    } catch (err) {
      return { problem: `Not JSON: ${(err as Error).message}` };
    }
  }, [text]);
  const problems = 'value' in parsed && schema.data ? checkSchema(schema.data, parsed.value) : [];
  const changes =
    'value' in parsed && props.current ? diffDocuments(props.current.document as Json, parsed.value) : [];
  const valid = 'value' in parsed && schema.data !== null && problems.length === 0;

  const submit = (e: SubmitEvent) => {
    e.preventDefault();
    if (!valid || !('value' in parsed)) return;
    setBusy(true);
    setError(null);
    ok(
      props.session.client.api.PUT('/v1/policies', {
        body: parsed.value as unknown as PolicyRecord['document'],
      }),
    ).then(
      (record) => {
        setBusy(false);
        props.onPublished(record);
      },
      (err: unknown) => {
        setBusy(false);
        setError(asPurserError(err));
      },
    );
  };

  return (
    <form class="policy-form" onSubmit={submit} aria-describedby="policy-help">
      <p id="policy-help" class="muted">
        The policy document as JSON. Omitted sections take the platform's defaults (
        <code>GET /v1/policies/defaults</code>); it is checked against the API's schema as you type.
      </p>
      <label for="policy-document">Policy document</label>
      <textarea
        id="policy-document"
        rows={18}
        spellcheck={false}
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        aria-invalid={!valid}
        aria-describedby="policy-problems"
      />
      <div id="policy-problems" aria-live="polite">
        {'problem' in parsed ? (
          <p class="invalid">{parsed.problem}</p>
        ) : schema.error ? (
          <ErrorBox error={schema.error} />
        ) : problems.length > 0 ? (
          <ul class="invalid">
            {problems.map((p) => (
              <li key={`${p.path} ${p.message}`}>
                <code>{p.path}</code> {p.message}
              </li>
            ))}
          </ul>
        ) : (
          <p class="valid">The document fits the schema.</p>
        )}
      </div>
      {props.current && changes.length > 0 ? (
        <>
          <h3>Against version {props.current.version}</h3>
          <ChangeList changes={changes} />
        </>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
      <button type="submit" class="primary" disabled={!valid || busy}>
        {busy ? 'Publishing…' : 'Publish'}
      </button>
    </form>
  );
}
