// The token registry (GET /v1/tokens, public), read once per session: symbols and decimals for
// the addresses the API gives.

import { ok, type Session } from './api.ts';
import { useLoad } from './ui.tsx';

export interface TokenInfo {
  symbol: string;
  decimals: number;
}

export interface TokenBook {
  /** `chainId:address` (lowercase) → symbol and decimals. */
  tokens: Map<string, TokenInfo>;
  /** chain id → its block explorer, where one is configured. */
  explorers: Map<number, string>;
}

const books = new WeakMap<Session, Promise<TokenBook>>();

/** The registry's tokens and explorers. */
export function tokenBook(session: Session): Promise<TokenBook> {
  let book = books.get(session);
  if (!book) {
    book = ok(session.client.api.GET('/v1/tokens')).then((registry) => {
      const book: TokenBook = { tokens: new Map(), explorers: new Map() };
      for (const chain of registry.chains) {
        if (chain.explorer_url) book.explorers.set(chain.chain_id, chain.explorer_url);
        for (const t of chain.tokens)
          book.tokens.set(`${chain.chain_id}:${t.address.toLowerCase()}`, {
            symbol: t.symbol,
            decimals: t.decimals,
          });
      }
      return book;
    });
    books.set(session, book);
  }
  return book;
}

export function useTokens(session: Session) {
  return useLoad(() => tokenBook(session), [session]).data;
}

/** A transaction's page on the chain's explorer, when one is configured. */
export function txLink(book: TokenBook | null, chainId: number, hash: string | undefined): string | null {
  const explorer = book?.explorers.get(chainId);
  return explorer && hash ? `${explorer}/tx/${hash}` : null;
}

export function tokenOf(book: TokenBook | null, chainId: number, address: string): TokenInfo {
  return (
    book?.tokens.get(`${chainId}:${address.toLowerCase()}`) ?? { symbol: address.slice(0, 8), decimals: 0 }
  );
}
