// The pieces every view is made of: links that stay in the app, loading with polling, the API's
// error as it gave it (message, what to do, next calls), and empty states that say what to do.

import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { asPurserError, type PurserError } from './api.ts';
import { BASE, navigate } from './router.ts';

export function Link(props: { to: string; children: ComponentChildren; class?: string; current?: boolean }) {
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a
      href={`${BASE}${props.to}`}
      onClick={onClick}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
    >
      {props.children}
    </a>
  );
}

/** The API's error body, whole: what went wrong, what to do about it, and the calls that help. */
export function ErrorBox({ error }: { error: PurserError }) {
  return (
    <div class="error" role="alert">
      <p class="error-message">
        <strong>{error.code}</strong>: {error.message}
      </p>
      {error.remediation ? <p class="error-remediation">{error.remediation}</p> : null}
      {error.next.length > 0 ? (
        <ul class="error-next">
          {error.next.map((n) => (
            <li key={`${n.method} ${n.path}`}>
              <code>
                {n.method} {n.path}
              </code>{' '}
              — {n.why}
            </li>
          ))}
        </ul>
      ) : null}
      {error.requestId ? <p class="muted">Request {error.requestId}</p> : null}
    </div>
  );
}

export function Empty(props: { title: string; children: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      <div>{props.children}</div>
    </div>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: PurserError | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads with `load` when the inputs change, and again every `pollMs` while the view is open
 * (short polling: what changed shows up without a reload).
 */
export function useLoad<T>(load: () => Promise<T>, inputs: unknown[], pollMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: PurserError | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    load().then(
      (data) => {
        if (mine === generation.current) setState({ data, error: null, loading: false });
      },
      (err: unknown) => {
        if (mine === generation.current)
          setState((s) => ({ data: s.data, error: asPurserError(err), loading: false }));
      },
    );
  }, inputs);
  useEffect(() => {
    setState({ data: null, error: null, loading: true });
    run();
    if (!pollMs) return () => void generation.current++;
    const timer = setInterval(run, pollMs);
    return () => {
      clearInterval(timer);
      generation.current++;
    };
  }, [run, pollMs]);
  return { ...state, reload: run };
}

/** What a load shows before its data: a quiet line while loading, the error when it failed. */
export function Pending({ loaded }: { loaded: Loaded<unknown> }) {
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  return (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  );
}

/** A button that runs an action, shows it running, and shows the API's error when it fails. */
export function ActionButton(props: {
  label: string;
  run: () => Promise<void>;
  kind?: 'primary' | 'danger';
  disabled?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<PurserError | null>(null);
  const onClick = () => {
    setBusy(true);
    setError(null);
    props.run().then(
      () => setBusy(false),
      (err: unknown) => {
        setBusy(false);
        setError(asPurserError(err));
      },
    );
  };
  return (
    <span class="action">
      <button type="button" class={props.kind ?? ''} disabled={busy || props.disabled} onClick={onClick}>
        {busy ? `${props.label}…` : props.label}
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </span>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value.replace(/[^a-z_-]/gi, '')}`}>{value}</span>;
}

/** A labelled row of facts. */
export function Facts({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {rows.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Page(props: { title: string; children: ComponentChildren; actions?: JSX.Element | null }) {
  useEffect(() => {
    document.title = `${props.title} · Purser console`;
  }, [props.title]);
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions ?? null}
      </div>
      {props.children}
    </section>
  );
}

/** A column of a DataTable: its heading, how a row fills its cell, right-aligned numbers. */
export interface Column<T> {
  header: ComponentChildren;
  cell: (row: T) => ComponentChildren;
  num?: boolean;
  /** The cell that names the row (a row header for screen readers). */
  rowHeader?: boolean;
}

/**
 * A table of rows that scrolls sideways on a narrow screen rather than widening the page. Rows
 * carry `rowAttrs` (data-* attributes the tests and links find them by).
 */
export function DataTable<T>(props: {
  caption: ComponentChildren;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  rowAttrs?: (row: T) => Record<string, string>;
  name?: string;
  captionHidden?: boolean;
}) {
  return (
    <div class="table-wrap">
      <table data-table={props.name}>
        <caption class={props.captionHidden ? 'visually-hidden' : undefined}>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c, i) => (
              <th key={i} scope="col" class={c.num ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)} {...(props.rowAttrs?.(row) ?? {})}>
              {props.columns.map((c, i) =>
                c.rowHeader ? (
                  <th key={i} scope="row">
                    {c.cell(row)}
                  </th>
                ) : (
                  <td key={i} class={c.num ? 'num' : undefined}>
                    {c.cell(row)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
