// Approvals: the intents waiting for their approvers (the policy's spend.approvals), each with who
// signed so far, and a button that signs its EIP-712 approval with the browser's wallet when the
// wallet is one of the approvers. The signature alone approves (POST /v1/intents/{id}/approvals).

import { injectedWallet, ok, type Schemas, type Session } from '../api.ts';
import { formatTime, formatUsd, shortHex } from '../format.ts';
import { ActionButton, Badge, Empty, Link, Page, Pending, useLoad } from '../ui.tsx';

type Intent = Schemas['Intent'];

/** An intent's `report.approval`, as the API's OpenAPI document types it. */
export type Approval = Schemas['IntentApproval'];

export const approvalOf = (intent: Intent): Approval | null =>
  (intent.report['approval'] as Approval | undefined) ?? null;

/** Asks the browser's wallet for its EIP-712 signature of the approval (eth_signTypedData_v4). */
async function signWithWallet(session: Session, intentId: string, approval: Approval): Promise<void> {
  const wallet = injectedWallet();
  if (!wallet) throw new Error('No browser wallet is available to sign with.');
  const accounts = (await wallet.request({ method: 'eth_requestAccounts' })) as string[];
  const signer = accounts.find((a) => approval.approvers.includes(a.toLowerCase()));
  if (!signer)
    throw new Error(
      `None of the wallet's accounts (${accounts.join(', ')}) is an approver of this intent: switch to one of ${approval.approvers.join(', ')}.`,
    );
  const typed = {
    ...approval.typed_data,
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
      ],
      ...(approval.typed_data['types'] as Record<string, unknown>),
    },
  };
  const signature = (await wallet.request({
    method: 'eth_signTypedData_v4',
    params: [signer, JSON.stringify(typed)],
  })) as string;
  await ok(
    session.client.api.POST('/v1/intents/{id}/approvals', {
      params: { path: { id: intentId } },
      body: { approver: signer, signature },
    }),
  );
}

/** An intent's approval: quorum, who signed, until when, and the wallet's button while it waits. */
export function ApprovalPanel(props: { session: Session; intent: Intent; onSigned: () => void }) {
  const approval = approvalOf(props.intent);
  if (!approval) return null;
  const signed = new Set(approval.signatures.map((s) => s.approver));
  return (
    <div class="card approval" data-approval={props.intent.id} data-state={approval.state}>
      <p>
        <Badge value={approval.state} /> {approval.signatures.length} of {approval.quorum} approvals
        {approval.state === 'waiting' ? `, until ${formatTime(approval.expires_at)}` : ''}
      </p>
      <ul>
        {approval.approvers.map((a) => (
          <li key={a}>
            <code>{shortHex(a, 6)}</code> {signed.has(a) ? '— signed' : '— not yet'}
          </li>
        ))}
      </ul>
      {approval.state === 'waiting' ? (
        injectedWallet() ? (
          <ActionButton
            label="Sign approval with wallet"
            kind="primary"
            run={async () => {
              await signWithWallet(props.session, props.intent.id, approval);
              props.onSigned();
            }}
          />
        ) : (
          <p class="muted">
            Sign <code>report.approval.typed_data</code> with an approver (the SDK's <code>signApproval</code>
            ) and post it to <code>POST /v1/intents/{props.intent.id}/approvals</code>, or open the console in
            a browser with an approver's wallet.
          </p>
        )
      ) : null}
    </div>
  );
}

export function ApprovalsView({ session }: { session: Session }) {
  const loaded = useLoad(
    () => ok(session.client.api.GET('/v1/intents', { params: { query: { limit: 200 } } })),
    [session],
    3_000,
  );
  const waiting = (loaded.data?.intents ?? []).filter((i) => approvalOf(i)?.state === 'waiting');
  return (
    <Page title="Approvals">
      {!loaded.data ? (
        <Pending loaded={loaded} />
      ) : waiting.length === 0 ? (
        <Empty title="Nothing waits for approval">
          Intents worth more than a policy's <code>spend.approvals.above_usd</code> wait here for their
          approvers. Set an approval tier in the wallet's policy (<Link to="/policies">Policies</Link>).
        </Empty>
      ) : (
        <ul class="cards">
          {waiting.map((i) => (
            <li key={i.id} class="card">
              <p>
                <Link to={`/intents/${i.id}`}>{formatUsd(i.params.value_usd)}</Link> {i.kind} from{' '}
                <code>{shortHex(i.wallet)}</code>, admitted {formatTime(i.created_at)}
              </p>
              <ApprovalPanel session={session} intent={i} onSigned={loaded.reload} />
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
