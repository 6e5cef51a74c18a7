// The chart of ledger accounts and the asset identifiers (docs/ledger.md). Codes are plain
// strings so entries stay one narrow row; the database checks every code and asset against the
// same patterns (migration 0009).

/** The prepaid balance's asset: integer micro-USD. */
export const USD = 'USD';

/** Platform fee revenue (USD, credit-normal). Derived from entries: never a hot balance row. */
export const FEE_REVENUE = 'platform:fee_revenue';
/** The platform treasury (USD received for prepaid top-ups, debit-normal). */
export const TREASURY = 'platform:treasury';

const ACCOUNT_ID = /^[A-Za-z0-9_]+$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const SLUG = /^[a-z0-9-]+$/;

const LEDGER_ACCOUNT_PATTERNS = [
  /^account:[A-Za-z0-9_]+:prepaid$/,
  /^platform:(fee_revenue|treasury)$/,
  /^wallet:[0-9]+:0x[0-9a-f]{40}$/,
  /^venue:[a-z0-9-]+:[0-9]+$/,
  /^bridge:[a-z0-9-]+:[0-9]+:[0-9]+$/,
  /^external:[0-9]+$/,
];

const ASSET_PATTERN =
  /^(USD|eip155:([0-9]+)\/(erc20:(0x[0-9a-f]{40})|erc1155:(0x[0-9a-f]{40})\/(0|[1-9][0-9]*)|slip44:([0-9]+)))$/;

function chainId(value: number): string {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`not a chain id: ${value}`);
  return String(value);
}

function address(value: string): string {
  const lower = value.toLowerCase();
  if (!ADDRESS.test(lower)) throw new RangeError(`not an address: ${value}`);
  return lower;
}

/** `account:<acc_id>:prepaid`: what the platform owes the account (USD, credit-normal). */
export function prepaidAccount(accountId: string): string {
  if (!ACCOUNT_ID.test(accountId)) throw new RangeError(`not an account id: ${accountId}`);
  return `account:${accountId}:prepaid`;
}

/** The account id of a prepaid ledger account, or null for any other code. */
export function prepaidOwner(ledgerAccount: string): string | null {
  const m = /^account:([A-Za-z0-9_]+):prepaid$/.exec(ledgerAccount);
  return m?.[1] ?? null;
}

/** `wallet:<chain>:<address>`: a wallet's token positions, one balance per asset (debit-normal). */
export function walletAccount(chain: number, wallet: string): string {
  return `wallet:${chainId(chain)}:${address(wallet)}`;
}

/** `venue:<venue>:<chain>`: what is in flight with an execution venue (swaps, orders, fills). */
export function venueAccount(venue: string, chain: number): string {
  if (!SLUG.test(venue)) throw new RangeError(`not a venue id: ${venue}`);
  return `venue:${venue}:${chainId(chain)}`;
}

/** `bridge:<protocol>:<from>:<to>`: value burned on one chain and not yet minted on the other. */
export function bridgeAccount(protocol: string, fromChain: number, toChain: number): string {
  if (!SLUG.test(protocol)) throw new RangeError(`not a bridge protocol: ${protocol}`);
  return `bridge:${protocol}:${chainId(fromChain)}:${chainId(toChain)}`;
}

/** `external:<chain>`: everyone outside the platform on a chain (deposits in, payments out). */
export function externalAccount(chain: number): string {
  return `external:${chainId(chain)}`;
}

export function isLedgerAccount(code: string): boolean {
  return LEDGER_ACCOUNT_PATTERNS.some((p) => p.test(code));
}

/** An ERC-20 token on a chain: `eip155:<chain>/erc20:<address>` (CAIP-19). */
export function erc20Asset(chain: number, token: string): string {
  return `eip155:${chainId(chain)}/erc20:${address(token)}`;
}

/** One ERC-1155 token id (a prediction-market outcome share): `eip155:<chain>/erc1155:<address>/<id>`. */
export function erc1155Asset(chain: number, token: string, tokenId: bigint): string {
  if (tokenId < 0n) throw new RangeError('an ERC-1155 token id is not negative');
  return `eip155:${chainId(chain)}/erc1155:${address(token)}/${tokenId}`;
}

/** A chain's native coin by its SLIP-44 coin type (`60` for ETH): `eip155:<chain>/slip44:<type>`. */
export function nativeAsset(chain: number, slip44: number): string {
  if (!Number.isSafeInteger(slip44) || slip44 < 0) throw new RangeError(`not a SLIP-44 coin type: ${slip44}`);
  return `eip155:${chainId(chain)}/slip44:${slip44}`;
}

/** SLIP-44 coin type of each chain's native coin (POL on Polygon; ETH elsewhere). */
const NATIVE_SLIP44: Readonly<Record<number, number>> = { 137: 966 };

/** The native coin of a chain as the ledger names it (`…/slip44:966` on Polygon, `…/slip44:60` elsewhere). */
export const chainNativeAsset = (chain: number): string => nativeAsset(chain, NATIVE_SLIP44[chain] ?? 60);

export type ParsedAsset =
  | { kind: 'usd' }
  | { kind: 'erc20'; chainId: number; token: string }
  | { kind: 'erc1155'; chainId: number; token: string; tokenId: bigint }
  | { kind: 'native'; chainId: number; slip44: number };

/** Parses an asset identifier; null when it is not one. */
export function parseAsset(asset: string): ParsedAsset | null {
  const m = ASSET_PATTERN.exec(asset);
  if (!m) return null;
  if (asset === USD) return { kind: 'usd' };
  const chain = Number(m[2]);
  if (m[4]) return { kind: 'erc20', chainId: chain, token: m[4] };
  if (m[5] && m[6]) return { kind: 'erc1155', chainId: chain, token: m[5], tokenId: BigInt(m[6]) };
  return { kind: 'native', chainId: chain, slip44: Number(m[7]) };
}

export function isAsset(asset: string): boolean {
  return ASSET_PATTERN.test(asset);
}
