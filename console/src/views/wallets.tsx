// Wallets: every wallet the account has a policy or a delegation for; per wallet and token, the
// books against the chain at the block they are as of, and holdings over the last days (the
// closing balances of daily statements).

import { ok, type Schemas, type Session } from '../api.ts';
import { LineChart } from '../charts.tsx';
import { formatUnits, shortHex, unitsToNumber } from '../format.ts';
import { Badge, Empty, Link, Page, Pending, useLoad } from '../ui.tsx';

/** The account's wallets: those named by a policy version or a delegation, first seen first. */
export async function accountWallets(session: Session): Promise<string[]> {
  const { api } = session.client;
  const [policies, delegations] = await Promise.all([
    ok(api.GET('/v1/policies', { params: { query: { limit: 100 } } })),
    ok(api.GET('/v1/delegations', { params: { query: { limit: 100 } } })),
  ]);
  const wallets = [
    ...policies.policies.map((p) => p.wallet.toLowerCase()),
    ...delegations.delegations.map((d) => d.account.toLowerCase()),
  ];
  return [...new Set(wallets)];
}

type Balances = Schemas['WalletHoldings'];

function HoldingsTable({ balances }: { balances: Balances }) {
  return (
    <>
      {balances.chains.map((chain) => (
        <div key={chain.chain_id} class="table-wrap" data-chain={chain.chain_id}>
          <table>
            <caption>
              Chain {chain.chain_id}: as of block {chain.block ?? '—'} (head {chain.head ?? '—'}, watched
              through {chain.watched_through ?? '—'})
            </caption>
            <thead>
              <tr>
                <th scope="col">Token</th>
                <th scope="col" class="num">
                  Ledger
                </th>
                <th scope="col" class="num">
                  Chain
                </th>
                <th scope="col" class="num">
                  Unconfirmed
                </th>
                <th scope="col">Books</th>
              </tr>
            </thead>
            <tbody>
              {chain.holdings.map((h) => (
                <tr key={h.asset} data-symbol={h.symbol ?? h.asset}>
                  <th scope="row">{h.symbol ?? <code>{h.asset}</code>}</th>
                  <td class="num" data-field="ledger">
                    {formatUnits(h.ledger, h.decimals)}
                  </td>
                  <td class="num" data-field="chain">
                    {formatUnits(h.chain, h.decimals)}
                  </td>
                  <td class="num">{formatUnits(h.unconfirmed, h.decimals)}</td>
                  <td>
                    <Badge value={h.ledger === h.chain ? 'matches' : 'differs'} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}

const DAYS = 7;

/** The wallet's closing balance per token on each of the last days, from daily statements. */
async function holdingsOverTime(session: Session, wallet: string) {
  const { api } = session.client;
  const today = new Date();
  const days = Array.from({ length: DAYS }, (_, i) => {
    const d = new Date(
      Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (DAYS - 1 - i)),
    );
    return d.toISOString().slice(0, 10);
  });
  const statements = await Promise.all(
    days.map((period) => ok(api.GET('/v1/statements', { params: { query: { wallet, period } } }))),
  );
  const bySymbol = new Map<string, Array<{ x: number; y: number }>>();
  statements.forEach((s, day) => {
    if (typeof s !== 'object') return;
    const totals = new Map<string, number>();
    for (const b of s.statement.balances) {
      if (!b.ledger_account.startsWith('wallet:')) continue;
      const symbol = b.symbol ?? shortHex(b.asset);
      totals.set(symbol, (totals.get(symbol) ?? 0) + unitsToNumber(b.closing, b.decimals));
    }
    for (const [symbol, y] of totals) {
      const points = bySymbol.get(symbol) ?? [];
      points.push({ x: day, y });
      bySymbol.set(symbol, points);
    }
  });
  return { days, series: [...bySymbol].map(([label, points]) => ({ label, points })) };
}

export function WalletsView({ session }: { session: Session }) {
  const wallets = useLoad(() => accountWallets(session), [session]);
  return (
    <Page title="Wallets">
      {!wallets.data ? (
        <Pending loaded={wallets} />
      ) : wallets.data.length === 0 ? (
        <Empty title="No wallets yet">
          Publish a policy for your agent's smart account (<Link to="/policies">Policies</Link>) or delegate
          to the executor with <code>POST /v1/delegations/prepare</code>; its wallet shows here.
        </Empty>
      ) : (
        <ul class="cards">
          {wallets.data.map((w) => (
            <li key={w} class="card">
              <Link to={`/wallets/${w}`}>
                <code>{shortHex(w, 6)}</code>
              </Link>
              <WalletSummary session={session} wallet={w} />
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

function WalletSummary({ session, wallet }: { session: Session; wallet: string }) {
  const balances = useLoad(
    () =>
      ok(session.client.api.GET('/v1/wallets/{address}/balances', { params: { path: { address: wallet } } })),
    [session, wallet],
  );
  if (!balances.data) return <Pending loaded={balances} />;
  const holdings = balances.data.chains.flatMap((c) => c.holdings);
  const differing = holdings.filter((h) => h.ledger !== h.chain).length;
  return (
    <p>
      {holdings
        .map((h) => `${formatUnits(h.chain, h.decimals)} ${h.symbol ?? shortHex(h.asset)}`)
        .join(' · ') || 'No holdings'}{' '}
      <Badge value={differing === 0 ? 'matches' : 'differs'} />
    </p>
  );
}

export function WalletView({ session, wallet }: { session: Session; wallet: string }) {
  const balances = useLoad(
    () =>
      ok(session.client.api.GET('/v1/wallets/{address}/balances', { params: { path: { address: wallet } } })),
    [session, wallet],
    5_000,
  );
  const history = useLoad(() => holdingsOverTime(session, wallet), [session, wallet]);
  return (
    <Page title={`Wallet ${shortHex(wallet, 6)}`}>
      <p class="muted">
        <code>{wallet}</code>. The books (ledger) and the chain per token; they match when every settled
        movement is booked.
      </p>
      {balances.data ? <HoldingsTable balances={balances.data} /> : <Pending loaded={balances} />}
      <h2>Holdings over the last {DAYS} days</h2>
      {!history.data ? (
        <Pending loaded={history} />
      ) : history.data.series.length === 0 ? (
        <Empty title="No booked movements in these days">
          Holdings show here once the ledger books a movement of this wallet.
        </Empty>
      ) : (
        <LineChart
          title="Closing balance per day (UTC), per token"
          series={history.data.series}
          xLabel={(x) => history.data!.days[x]?.slice(5) ?? ''}
        />
      )}
      <p>
        <Link to={`/intents?wallet=${wallet}`}>This wallet's intents</Link> ·{' '}
        <Link to={`/policies/${wallet}`}>Its policy</Link>
      </p>
    </Page>
  );
}
