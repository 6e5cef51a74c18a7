// What a venue account still lacks on chain (docs/prediction-markets.md, "Onboarding"): Polymarket's
// six grants (a pUSD allowance and a conditional-tokens operator approval for each of the CTF
// Exchange V2, the NegRisk CTF Exchange V2 and the NegRisk Adapter) and its collateral (pUSD, and
// USDC.e still to wrap), read live; with owner-signable calldata for what is missing. Purser
// submits none of it.

import { encodeFunctionData, erc20Abi, maxUint256, parseAbi, type Address, type Hex } from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { PmContracts } from '../../config.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';

export const ctfAbi = parseAbi([
  'function isApprovedForAll(address owner, address operator) view returns (bool)',
  'function setApprovalForAll(address operator, bool approved)',
  'function balanceOf(address owner, uint256 id) view returns (uint256)',
]);
export const onrampAbi = parseAbi(['function wrap(address _asset, address _to, uint256 _amount)']);

/** An allowance at least this large counts as granted (the calldata grants the maximum). */
export const EFFECTIVELY_UNLIMITED = 2n ** 128n;

type Spender = 'exchange' | 'negRiskExchange' | 'negRiskAdapter';
const SPENDERS: Array<{ key: Spender; slug: string; name: string }> = [
  { key: 'exchange', slug: 'ctf_exchange', name: 'CTF Exchange V2' },
  { key: 'negRiskExchange', slug: 'neg_risk_ctf_exchange', name: 'NegRisk CTF Exchange V2' },
  { key: 'negRiskAdapter', slug: 'neg_risk_adapter', name: 'NegRisk Adapter' },
];

export interface Grant {
  id: string;
  description: string;
  approved: boolean;
  call: { to: Address; data: Hex } | null;
}

export interface WrapCall {
  id: string;
  description: string;
  to: Address;
  data: Hex;
}

export interface OnboardingStatus {
  address: Address;
  trade_ready: boolean;
  approvals: Grant[];
  collateral: { pusd: string; usdce_unwrapped: string; wrap_calls: WrapCall[] | null };
  collateral_note: string;
}

export const COLLATERAL_NOTE =
  "Polymarket's V2 collateral is pUSD, backed 1:1 by USDC.e held in Polymarket's vault. USDC.e in the " +
  'wallet does not trade until it is wrapped: approve the onramp (not pUSD) on USDC.e, then call ' +
  'wrap(USDC.e, wallet, amount) on the onramp, both from the wallet (a Safe executes them as Safe ' +
  'transactions; POST /v1/pm/wrap does it for stored Safe credentials). The CLOB reads balances with a ' +
  'short cache: GET /balance-allowance/update refreshes it.';

/** The six grants and both collateral balances of `address`, read now. */
export interface ChainReadings {
  allowances: Record<Spender, bigint>;
  operators: Record<Spender, boolean>;
  pusd: bigint;
  usdce: bigint;
  usdceAllowanceToOnramp: bigint;
}

/** Reads the grants and balances; 503 when the chain does not answer. */
export async function readGrants(
  chain: ChainPort,
  chainId: number,
  contracts: PmContracts,
  address: Address,
  deadline: Deadline | null,
): Promise<ChainReadings> {
  deadline?.check('reading the wallet on chain');
  const client = chain.publicClient(chainId);
  try {
    const allowance = (token: Address, spender: Address) =>
      client.readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [address, spender],
      });
    const operator = (op: Address) =>
      client.readContract({
        address: contracts.conditionalTokens,
        abi: ctfAbi,
        functionName: 'isApprovedForAll',
        args: [address, op],
      });
    const balance = (token: Address) =>
      client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
    const [a0, a1, a2, o0, o1, o2, pusd, usdce, toOnramp] = await Promise.all([
      allowance(contracts.collateral, contracts.exchange),
      allowance(contracts.collateral, contracts.negRiskExchange),
      allowance(contracts.collateral, contracts.negRiskAdapter),
      operator(contracts.exchange),
      operator(contracts.negRiskExchange),
      operator(contracts.negRiskAdapter),
      balance(contracts.collateral),
      balance(contracts.usdce),
      allowance(contracts.usdce, contracts.onramp),
    ]);
    return {
      allowances: { exchange: a0, negRiskExchange: a1, negRiskAdapter: a2 },
      operators: { exchange: o0, negRiskExchange: o1, negRiskAdapter: o2 },
      pusd,
      usdce,
      usdceAllowanceToOnramp: toOnramp,
    };
  } catch (err) {
    throw unavailable(`The chain ${chainId} RPC did not answer: ${(err as Error).message.split('\n')[0]}`, {
      remediation: 'Retry in a few seconds; nothing was changed.',
      next: [],
    });
  }
}

/** How many of the six grants are set. */
export function grantsSet(r: ChainReadings): number {
  return SPENDERS.reduce(
    (n, s) => n + (r.allowances[s.key] >= EFFECTIVELY_UNLIMITED ? 1 : 0) + (r.operators[s.key] ? 1 : 0),
    0,
  );
}

export async function onboardingStatus(
  chain: ChainPort,
  chainId: number,
  contracts: PmContracts,
  address: Address,
  deadline: Deadline,
): Promise<OnboardingStatus> {
  const r = await readGrants(chain, chainId, contracts, address, deadline);
  const approvals: Grant[] = [];
  for (const s of SPENDERS) {
    const spender = contracts[s.key];
    const allowed = r.allowances[s.key] >= EFFECTIVELY_UNLIMITED;
    approvals.push({
      id: `pusd_allowance_${s.slug}`,
      description: `pUSD allowance for the ${s.name} (${spender})`,
      approved: allowed,
      call: allowed
        ? null
        : {
            to: contracts.collateral,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, maxUint256] }),
          },
    });
  }
  for (const s of SPENDERS) {
    const operator = contracts[s.key];
    approvals.push({
      id: `ctf_operator_${s.slug}`,
      description: `Conditional-tokens operator approval for the ${s.name} (${operator})`,
      approved: r.operators[s.key],
      call: r.operators[s.key]
        ? null
        : {
            to: contracts.conditionalTokens,
            data: encodeFunctionData({
              abi: ctfAbi,
              functionName: 'setApprovalForAll',
              args: [operator, true],
            }),
          },
    });
  }
  return {
    address,
    trade_ready: approvals.every((a) => a.approved),
    approvals,
    collateral: {
      pusd: r.pusd.toString(),
      usdce_unwrapped: r.usdce.toString(),
      wrap_calls: r.usdce > 0n ? wrapCalls(contracts, address, r.usdce, r.usdceAllowanceToOnramp) : null,
    },
    collateral_note: COLLATERAL_NOTE,
  };
}

/** Approve the onramp on USDC.e (unless the allowance covers `amount`), then wrap `amount` to `to`. */
export function wrapCalls(
  contracts: PmContracts,
  to: Address,
  amount: bigint,
  allowance: bigint,
): WrapCall[] {
  const calls: WrapCall[] = [];
  if (allowance < amount) {
    calls.push({
      id: 'approve_usdce_onramp',
      description: `Approve the collateral onramp (${contracts.onramp}) for ${amount} USDC.e base units`,
      to: contracts.usdce,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [contracts.onramp, amount] }),
    });
  }
  calls.push({
    id: 'wrap_usdce',
    description: `Wrap ${amount} USDC.e base units into pUSD, paid to ${to}`,
    to: contracts.onramp,
    data: encodeFunctionData({ abi: onrampAbi, functionName: 'wrap', args: [contracts.usdce, to, amount] }),
  });
  return calls;
}
