// The Purser console: sign-in, then the owner's views (or the operator's), one URL each.

import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Session } from './api.ts';
import { match, navigate, usePath } from './router.ts';
import { Empty, Link, Page } from './ui.tsx';
import { ApprovalsView } from './views/approvals.tsx';
import { DelegationsView } from './views/delegations.tsx';
import { IntentView, IntentsView } from './views/intents.tsx';
import { MarketsView } from './views/markets.tsx';
import { MoneyView } from './views/money.tsx';
import { AccountsView, AlertsView, QueuesView, SwitchesView } from './views/operator.tsx';
import { PoliciesView, PolicyView } from './views/policies.tsx';
import { SignIn } from './views/sign-in.tsx';
import { SpendView } from './views/spend.tsx';
import { WalletsView, WalletView } from './views/wallets.tsx';
import { WebhooksView } from './views/webhooks.tsx';

interface NavItem {
  to: string;
  label: string;
}

const OWNER_NAV: NavItem[] = [
  { to: '/wallets', label: 'Wallets' },
  { to: '/intents', label: 'Intents' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/policies', label: 'Policies' },
  { to: '/spend', label: 'Spend' },
  { to: '/delegations', label: 'Delegations' },
  { to: '/money', label: 'Money' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/markets', label: 'Markets' },
];

const OPERATOR_NAV: NavItem[] = [
  { to: '/ops/switches', label: 'Switches' },
  { to: '/ops/queues', label: 'Queues' },
  { to: '/ops/accounts', label: 'Accounts' },
  { to: '/ops/alerts', label: 'Alerts' },
];

function operatorView(session: Session, path: string) {
  if (path === '/ops/switches') return <SwitchesView session={session} />;
  if (path === '/ops/queues') return <QueuesView session={session} />;
  if (path === '/ops/accounts')
    return <AccountsView session={session} cursor={new URLSearchParams(location.search).get('cursor')} />;
  if (path === '/ops/alerts') return <AlertsView session={session} />;
  return null;
}

function ownerView(session: Session, path: string) {
  const query = new URLSearchParams(location.search);
  let params: Record<string, string> | null;
  if (path === '/wallets') return <WalletsView session={session} />;
  if ((params = match('/wallets/:address', path)))
    return <WalletView session={session} wallet={params['address']!} />;
  if (path === '/intents')
    return (
      <IntentsView
        session={session}
        wallet={query.get('wallet')}
        offset={Math.max(0, Number(query.get('offset') ?? 0) || 0)}
      />
    );
  if ((params = match('/intents/:id', path))) return <IntentView session={session} id={params['id']!} />;
  if (path === '/policies') return <PoliciesView session={session} />;
  if ((params = match('/policies/:wallet', path)))
    return <PolicyView session={session} wallet={params['wallet']!} />;
  if (path === '/approvals') return <ApprovalsView session={session} />;
  if (path === '/spend') return <SpendView session={session} wallet={query.get('wallet')} />;
  if (path === '/delegations') return <DelegationsView session={session} />;
  if (path === '/money') return <MoneyView session={session} />;
  if (path === '/webhooks') return <WebhooksView session={session} />;
  if (path === '/markets') return <MarketsView session={session} />;
  return null;
}

function NotFound({ home }: { home: string }) {
  return (
    <Page title="No such view">
      <Empty title="The console has no page at this address">
        <Link to={home}>Go to the start page</Link>.
      </Empty>
    </Page>
  );
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const path = usePath();
  const nav = session?.kind === 'operator' ? OPERATOR_NAV : OWNER_NAV;
  const home = nav[0]?.to ?? '/';

  // The root opens the first view; every move puts the focus on the new view's heading.
  useEffect(() => {
    if (session && path === '/') navigate(home, true);
  }, [session, path, home]);
  useEffect(() => {
    document.getElementById('page-title')?.focus();
  }, [path, session]);

  if (!session)
    return (
      <main id="main">
        <SignIn onSession={setSession} />
      </main>
    );

  const view = session.kind === 'operator' ? operatorView(session, path) : ownerView(session, path);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Purser</span>
        <nav aria-label="Views">
          <ul>
            {nav.map((item) => (
              <li key={item.to}>
                <Link to={item.to} current={path === item.to || path.startsWith(`${item.to}/`)}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {session.kind === 'operator' ? (
            'Operator'
          ) : (
            <code title={session.address ?? ''}>{session.address?.slice(0, 10)}…</code>
          )}
          <button type="button" class="link" onClick={() => setSession(null)}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main">{view ?? (path === '/' ? null : <NotFound home={home} />)}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
