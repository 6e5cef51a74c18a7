// The token registry (GET /v1/tokens, public), read once per session: symbols and decimals for
// the addresses the API gives.

import { ok, type Session } from './api.ts';
import { useLoad } from './ui.tsx';

export interface TokenInfo {
  symbol: string;
  decimals: number;
}

export type TokenBook = Map<string, TokenInfo>;

const books = new WeakMap<Session, Promise<TokenBook>>();

/** `chainId:address` (lowercase) → symbol and decimals. */
export function tokenBook(session: Session): Promise<TokenBook> {
  let book = books.get(session);
  if (!book) {
    book = ok(session.client.api.GET('/v1/tokens')).then((registry) => {
      const map: TokenBook = new Map();
      for (const chain of registry.chains)
        for (const t of chain.tokens)
          map.set(`${chain.chain_id}:${t.address.toLowerCase()}`, { symbol: t.symbol, decimals: t.decimals });
      return map;
    });
    books.set(session, book);
  }
  return book;
}

export function useTokens(session: Session) {
  return useLoad(() => tokenBook(session), [session]).data;
}

export function tokenOf(book: TokenBook | null, chainId: number, address: string): TokenInfo {
  return book?.get(`${chainId}:${address.toLowerCase()}`) ?? { symbol: address.slice(0, 8), decimals: 0 };
}
