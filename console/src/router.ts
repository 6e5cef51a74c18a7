// Views are paths under /console (one URL each, so a link or a reload opens the same view): the
// History API moves between them without a page load.

import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

let listeners: Array<() => void> = [];

/** The path below /console, e.g. `/intents/7d2f…` (`/` for the console's root). */
export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

export function navigate(path: string, replace = false): void {
  const url = `${BASE}${path === '/' ? '' : path}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The current path, re-rendering on every move. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const listener = () => setPath(currentPath());
    listeners.push(listener);
    return () => {
      listeners = listeners.filter((l) => l !== listener);
    };
  }, []);
  return path;
}

/** Matches `/intents/:id` against a path; the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) {
      if (!h) return null;
      params[w.slice(1)] = decodeURIComponent(h);
    } else if (w !== h) return null;
  }
  return params;
}
