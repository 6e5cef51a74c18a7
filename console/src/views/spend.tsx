// Spend: per wallet, the day's spend and the hour's actions against its policy's caps, as the
// policy engine counts them (a dry run of POST /v1/checks, which reserves nothing), and what the
// wallet's running intents hold reserved right now.

import { ok, type Session } from '../api.ts';
import { Gauge } from '../charts.tsx';
import { formatUsd, shortHex } from '../format.ts';
import { Empty, Facts, Link, Page, Pending, useLoad } from '../ui.tsx';
import { accountWallets } from './wallets.tsx';

/** `12.5` → 12500000n micro-USD; exact, no floating point. */
export function usdToMicro(usd: string): bigint {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole || '0') * 1_000_000n + BigInt((fraction + '000000').slice(0, 6));
}

/** 12500000n micro-USD → `12.5`. */
export function microToUsd(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / 1_000_000n}${fraction ? `.${fraction}` : ''}`;
}

const RUNNING = new Set(['planned', 'executing']);

interface WalletSpend {
  policyVersion: number;
  daily: { limit: string; used: string } | null;
  hourly: { limit: number; used: number } | null;
  reserved: string;
  running: number;
}

/**
 * The wallet's counters: a check of a conversion worth $0 answers each cap's limit and its value,
 * which is the current counter plus the checked action; $0 adds nothing to the day's spend, and
 * the one action it adds to the hour's count is taken off again.
 */
async function walletSpend(session: Session, wallet: string): Promise<WalletSpend> {
  const { api } = session.client;
  const [check, intents] = await Promise.all([
    ok(
      api.POST('/v1/checks', {
        body: { wallet, kind: 'conversion', amount_usd: '0', sell_token: 'USDC', buy_token: 'WETH' },
      }),
    ),
    ok(api.GET('/v1/intents', { params: { query: { wallet, limit: 200 } } })),
  ]);
  const rule = (name: string) => check.rules.find((r) => r.rule === name);
  const daily = rule('spend.daily_usd');
  const hourly = rule('spend.velocity_per_hour');
  const running = intents.intents.filter((i) => RUNNING.has(i.status));
  const reserved = running.reduce((sum, i) => sum + usdToMicro(i.params.value_usd ?? '0'), 0n);
  return {
    policyVersion: check.policy_version,
    daily:
      daily && typeof daily.limit === 'string' && typeof daily.value === 'string'
        ? { limit: daily.limit, used: daily.value }
        : null,
    hourly:
      hourly && typeof hourly.limit === 'number' && typeof hourly.value === 'number'
        ? { limit: hourly.limit, used: Math.max(0, hourly.value - 1) }
        : null,
    reserved: microToUsd(reserved),
    running: running.length,
  };
}

export function SpendView({ session, wallet }: { session: Session; wallet: string | null }) {
  const wallets = useLoad(
    () => (wallet ? Promise.resolve([wallet.toLowerCase()]) : accountWallets(session)),
    [session, wallet],
  );
  return (
    <Page title="Spend">
      <p class="muted">
        Each wallet's spend today and its actions in the last hour against its policy's caps, refreshed every
        5 seconds. The figures come from a dry run of <code>POST /v1/checks</code> for $0, which reserves
        nothing: its counters include what running intents hold.
      </p>
      {wallet ? (
        <p class="muted">
          Wallet <code>{wallet}</code> only. <Link to="/spend">All wallets</Link>
        </p>
      ) : null}
      {!wallets.data ? (
        <Pending loaded={wallets} />
      ) : wallets.data.length === 0 ? (
        <Empty title="No wallets yet">
          Spend is counted against a wallet's policy: publish one for your agent's smart account (
          <Link to="/policies">Policies</Link>) and its caps show here.
        </Empty>
      ) : (
        <ul class="cards">
          {wallets.data.map((w) => (
            <li key={w} class="card" data-wallet={w}>
              <Link to={`/spend?wallet=${w}`}>
                <code>{shortHex(w, 6)}</code>
              </Link>
              <WalletSpendCard session={session} wallet={w} />
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

function WalletSpendCard({ session, wallet }: { session: Session; wallet: string }) {
  const spend = useLoad(() => walletSpend(session, wallet), [session, wallet], 5_000);
  const s = spend.data;
  if (!s) return <Pending loaded={spend} />;
  const dailyUsed = s.daily ? Number(s.daily.used) : 0;
  const dailyCap = s.daily ? Number(s.daily.limit) : 0;
  return (
    <>
      {s.daily ? (
        <div data-gauge="daily" data-used={s.daily.used} data-cap={s.daily.limit}>
          <Gauge
            label="Spent today"
            used={dailyUsed}
            cap={dailyCap}
            text={`${formatUsd(s.daily.used)} of ${formatUsd(s.daily.limit)}`}
          />
        </div>
      ) : (
        <p class="muted">The policy sets no daily cap.</p>
      )}
      {s.hourly ? (
        <div data-gauge="hourly" data-used={s.hourly.used} data-cap={s.hourly.limit}>
          <Gauge
            label="Actions in the last hour"
            used={s.hourly.used}
            cap={s.hourly.limit}
            text={`${s.hourly.used} of ${s.hourly.limit}`}
          />
        </div>
      ) : (
        <p class="muted">The policy sets no hourly cap.</p>
      )}
      <Facts
        rows={[
          [
            'Reserved now',
            <span data-field="reserved">
              {formatUsd(s.reserved)} by {s.running} running intent{s.running === 1 ? '' : 's'}
            </span>,
          ],
          ['Policy', <Link to={`/policies/${wallet}`}>version {s.policyVersion}</Link>],
          ['Intents', <Link to={`/intents?wallet=${wallet}`}>this wallet's intents</Link>],
        ]}
      />
    </>
  );
}
