// The CLOB fake's balances and allowances: read on chain when the options name the collateral
// ERC-20 and the conditional tokens, else from an in-memory table tests set; what open orders
// already hold of them; and the funders (proxy wallets, Safes) a signer may trade for.

import { getAddress, parseAbi, type Address } from 'viem';
import type { ClobSide } from '../../../adapters/pm-venue/port.ts';
import type { ClobState } from './state.ts';
import { lower, MAX_UINT256, ONE } from './units.ts';

const erc20Abi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
]);
const erc1155Abi = parseAbi([
  'function balanceOf(address account, uint256 id) view returns (uint256)',
  'function isApprovedForAll(address account, address operator) view returns (bool)',
]);

const balanceKey = (owner: string, asset: string) => `${lower(owner)}:${asset}`;

function tableBalance(
  state: ClobState,
  owner: Address,
  asset: string,
): { balance: bigint; allowances: Record<string, bigint> } {
  const entry = state.balances.get(balanceKey(owner, asset));
  const allowances: Record<string, bigint> = {};
  for (const s of state.spenders) allowances[s] = entry?.allowances.get(lower(s)) ?? 0n;
  return { balance: entry?.balance ?? 0n, allowances };
}

/** A balance and its allowances for every spender: on chain where the options say, else the table. */
export async function balanceOf(
  state: ClobState,
  owner: Address,
  asset: 'COLLATERAL' | { tokenId: string },
): Promise<{ balance: bigint; allowances: Record<string, bigint> }> {
  const chain = state.chain;
  if (asset === 'COLLATERAL') {
    if (state.chainClient && chain?.collateral) {
      const token = chain.collateral;
      const [balance, ...allowed] = await Promise.all([
        state.chainClient.readContract({
          address: token,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [owner],
        }),
        ...state.spenders.map((s) =>
          state.chainClient!.readContract({
            address: token,
            abi: erc20Abi,
            functionName: 'allowance',
            args: [owner, s],
          }),
        ),
      ]);
      return { balance, allowances: Object.fromEntries(state.spenders.map((s, i) => [s, allowed[i] ?? 0n])) };
    }
    return tableBalance(state, owner, 'COLLATERAL');
  }
  if (state.chainClient && chain?.conditionalTokens) {
    const ctf = chain.conditionalTokens;
    const [balance, ...approved] = await Promise.all([
      state.chainClient.readContract({
        address: ctf,
        abi: erc1155Abi,
        functionName: 'balanceOf',
        args: [owner, BigInt(asset.tokenId)],
      }),
      ...state.spenders.map((s) =>
        state.chainClient!.readContract({
          address: ctf,
          abi: erc1155Abi,
          functionName: 'isApprovedForAll',
          args: [owner, s],
        }),
      ),
    ]);
    return {
      balance: balance as bigint,
      allowances: Object.fromEntries(state.spenders.map((s, i) => [s, approved[i] ? MAX_UINT256 : 0n])),
    };
  }
  return tableBalance(state, owner, asset.tokenId);
}

/** What the maker's open orders already hold: collateral, or tokens of `tokenId`. */
export function reserved(state: ClobState, maker: Address, side: ClobSide, tokenId: string): bigint {
  let total = 0n;
  for (const o of state.orders.values()) {
    if (o.status !== 'LIVE' || lower(o.maker) !== lower(maker) || o.side !== side) continue;
    const left = o.size - o.matched;
    if (side === 'BUY') total += (left * o.price) / ONE;
    else if (o.tokenId === tokenId) total += left;
  }
  return total;
}

/** The funder whose balance a signature type names for a key's address. */
export function funderFor(state: ClobState, address: Address, signatureType: number): Address | null {
  if (signatureType === 0 || signatureType === 3) return address;
  const list = state.funders.get(lower(address)) ?? [];
  const found = list.find((f) => f.type === null || f.type === signatureType);
  return found ? found.funder : null;
}

/** Sets a balance of the in-memory table; allowances default to the maximum for every spender. */
export function setBalance(
  state: ClobState,
  owner: Address,
  asset: 'COLLATERAL' | { tokenId: string },
  balance: bigint,
  allowances?: Partial<Record<Address, bigint>>,
): void {
  const key = balanceKey(owner, asset === 'COLLATERAL' ? 'COLLATERAL' : asset.tokenId);
  const map = new Map<string, bigint>();
  for (const s of state.spenders) {
    const given = allowances
      ? Object.entries(allowances).find(([a]) => lower(a) === lower(s))?.[1]
      : undefined;
    map.set(lower(s), allowances ? (given ?? 0n) : MAX_UINT256);
  }
  state.balances.set(key, { balance, allowances: map });
}

/** `funder` (a proxy wallet or Safe) may be the maker of orders `signer` signs (types 1 and 2). */
export function registerFunder(
  state: ClobState,
  funder: Address,
  signer: Address,
  signatureType?: 1 | 2,
): void {
  if (lower(funder) === lower(signer))
    throw new Error('registerFunder: the funder must differ from the signer');
  const list = state.funders.get(lower(signer)) ?? [];
  list.push({ funder: getAddress(funder), type: signatureType ?? null });
  state.funders.set(lower(signer), list);
}
