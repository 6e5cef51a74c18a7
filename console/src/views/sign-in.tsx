// Sign-in: with the browser's wallet (SIWE over EIP-1193), with an API key pasted for this
// session, or as the operator with the operator token. Nothing is stored: the token stays in
// this page's memory and a reload asks again.

import { useState } from 'preact/hooks';
import {
  accountSession,
  asPurserError,
  injectedWallet,
  operatorSession,
  walletSignIn,
  type PurserError,
  type Session,
} from '../api.ts';
import { ErrorBox } from '../ui.tsx';

export function SignIn({ onSession }: { onSession: (session: Session) => void }) {
  const [error, setError] = useState<PurserError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const wallet = injectedWallet();

  const attempt = (what: string, signIn: () => Promise<Session>) => {
    setBusy(what);
    setError(null);
    signIn().then(onSession, (err: unknown) => {
      setBusy(null);
      setError(asPurserError(err));
    });
  };

  const submitToken = (kind: 'key' | 'operator') => (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const token = String(new FormData(form).get('token') ?? '').trim();
    if (!token) return;
    attempt(kind, () => (kind === 'key' ? accountSession('key', token) : operatorSession(token)));
  };

  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in to the Purser console</h1>
      <p class="muted">
        See what your agents did with your money and whether they stay inside their limits. The console keeps
        your credential in this tab only; reloading signs you out.
      </p>
      {error ? <ErrorBox error={error} /> : null}
      <div class="sign-in-options">
        <div class="card">
          <h2>Browser wallet</h2>
          {wallet ? (
            <>
              <p>Sign a message with the wallet that owns your agents. It moves no funds and costs no gas.</p>
              <button
                type="button"
                class="primary"
                disabled={busy !== null}
                onClick={() => attempt('wallet', () => walletSignIn(wallet))}
              >
                {busy === 'wallet' ? 'Waiting for the wallet…' : 'Sign in with wallet'}
              </button>
            </>
          ) : (
            <p>
              No browser wallet was found in this browser. Install or unlock one and reload, or use an API key
              below.
            </p>
          )}
        </div>
        <form class="card" onSubmit={submitToken('key')}>
          <h2>API key</h2>
          <label for="key-token">API key or session token</label>
          <input id="key-token" name="token" type="password" autocomplete="off" spellcheck={false} required />
          <p class="muted">A key with the read scope shows everything; writes need the scopes they name.</p>
          <button type="submit" disabled={busy !== null}>
            {busy === 'key' ? 'Checking…' : 'Use this key'}
          </button>
        </form>
        <form class="card" onSubmit={submitToken('operator')}>
          <h2>Operator</h2>
          <label for="operator-token">Operator token</label>
          <input
            id="operator-token"
            name="token"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
          />
          <p class="muted">The token in OPERATOR_TOKEN (on a development start, .purser/operator.json).</p>
          <button type="submit" disabled={busy !== null}>
            {busy === 'operator' ? 'Checking…' : 'Sign in as operator'}
          </button>
        </form>
      </div>
    </section>
  );
}
