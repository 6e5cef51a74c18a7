// The policy document: its schema (every section and field), the platform defaults, default
// filling, the checks a JSON schema cannot express (registry symbols, venues of the chain,
// amounts in range) and the content hash. docs/policies.md describes every field.

import { createHash } from 'node:crypto';
import { Type, type Static, type TOptional, type TProperties } from 'typebox';
import { vocabularyString, type Vocabularies } from '../../core/http/vocabulary.ts';
import { canonicalJson } from '../../core/canonical-json.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { MAX_USD_MICRO, parseUsd, USD_PATTERN } from '../../core/money.ts';

/** Chains a policy may name: Base (conversions, gas), Base Sepolia (gas only), Polygon (markets). */
export const POLICY_CHAIN_IDS = [8453, 84532, 137] as const;
export type PolicyChainId = (typeof POLICY_CHAIN_IDS)[number];

/**
 * The vocabulary of `execution.venues`: the conversion venues the token registry lists, the real
 * ones and those the configuration adds (decisions.md, "Venue identifiers"). The application
 * gives its words when it builds (`policyVocabularies`).
 */
export const EXECUTION_VENUE_VOCABULARY = 'ExecutionVenue';

/** The words of the policy document's vocabularies, from the registry this application built. */
export function policyVocabularies(registry: TokenRegistry): Vocabularies {
  return { [EXECUTION_VENUE_VOCABULARY]: registry.conversionVenues() };
}
export const PREDICTION_MARKET_VENUES = ['polymarket', 'kalshi'] as const;

const usd = (description: string) =>
  Type.String({ pattern: USD_PATTERN, maxLength: 24, description: `${description} (USD decimal string)` });
const price = (description: string) =>
  Type.String({
    pattern: '^(0(\\.[0-9]{1,6})?|1(\\.0{1,6})?)$',
    description: `${description} (USD per share, 0 to 1, up to 6 decimals)`,
  });
const nullableUsd = (description: string) =>
  Type.Union([usd(description), Type.Null()], { description: `${description}; null switches it off` });
const symbolList = (description: string) =>
  Type.Array(Type.String({ pattern: '^[A-Z0-9.]{1,16}$' }), { uniqueItems: true, maxItems: 64, description });
function section<P extends TProperties>(description: string, properties: P) {
  const optional = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof P]: TOptional<P[K]>;
  };
  return Type.Object(optional, { additionalProperties: false, description });
}

const ADDRESS = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });

/** Most approvers an approval tier may name. */
export const MAX_APPROVERS = 10;

/**
 * The approval tier (issue 45, docs/policies.md "Approvals"): an intent worth more than
 * `above_usd` waits, planned, until `quorum` of `approvers` signed its EIP-712 approval, or ends
 * aborted after `ttl_minutes`. Optional and never defaulted: without it nothing waits.
 */
export const SpendApprovals = Type.Object(
  {
    above_usd: usd('Intents worth more than this wait for approval'),
    approvers: Type.Array(ADDRESS, {
      minItems: 1,
      maxItems: MAX_APPROVERS,
      uniqueItems: true,
      description: 'Who may approve: EOAs or smart accounts (ERC-1271, ERC-6492 when undeployed)',
    }),
    quorum: Type.Integer({
      minimum: 1,
      maximum: MAX_APPROVERS,
      description: 'How many different approvers must sign; at most the number of approvers',
    }),
    ttl_minutes: Type.Integer({
      minimum: 1,
      maximum: 10_080,
      description: 'How long an intent waits for its quorum before it ends aborted (approval_expired)',
    }),
  },
  { additionalProperties: false, description: 'Approval tier: above a threshold the owner co-signs' },
);
export type SpendApprovals = Static<typeof SpendApprovals>;

/** Fields a section keeps when given and never fills from the defaults (absent means off). */
const UNDEFAULTED_FIELDS: Partial<Record<string, readonly string[]>> = { spend: ['approvals'] };

const FIELDS = {
  float: {
    min_usd: usd('Stable balance below which the wallet counts as under-funded'),
    target_usd: usd('Stable balance a refill (rebalance or top-up) restores; at least min_usd'),
  },
  execution: {
    max_slippage_bps: Type.Integer({
      minimum: 0,
      maximum: 10_000,
      description: 'Slippage budget, basis points',
    }),
    venues: Type.Array(vocabularyString(EXECUTION_VENUE_VOCABULARY), {
      uniqueItems: true,
      description: 'Venue allowlist for conversions: venues of the chain that settle conversions',
    }),
    deadline_minutes: Type.Integer({
      minimum: 1,
      maximum: 1440,
      description: 'How long an intent may execute before it is interrupted',
    }),
  },
  gas: {
    enabled: Type.Boolean({
      description: 'Whether gas top-ups (unwrapping the wrapped native token) may run',
    }),
    max_top_up_usd: usd('Largest single gas top-up'),
  },
  stables: {
    accepted: symbolList('USD stables (registry symbols of the chain, stable: true) valued 1:1 as USD legs'),
    max_depeg_bps: Type.Integer({
      minimum: 0,
      maximum: 10_000,
      description: 'A stable whose reference price is further than this from 1 USD is not accepted',
    }),
  },
  spend: {
    per_tx_usd: usd('Cap on one spending action'),
    daily_usd: usd('Cap on the sum of one UTC day (refills at UTC midnight)'),
    velocity_per_hour: Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: 'Count of spending actions in any rolling hour',
    }),
    token_allowlist: symbolList(
      'Tokens the wallet may spend or receive: UPPERCASE registry symbols of the chain',
    ),
    screening_required_above_usd: nullableUsd(
      'Outbound transfers above this amount need the counterparty screened; a listed one is refused',
    ),
    approvals: SpendApprovals,
  },
  alerts: {
    daily_usage_pct: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: 'Emit policy.alert when the day reaches this share of daily_usd; 0 is off',
    }),
    on_refusal: Type.Boolean({ description: 'Emit policy.alert when a cap or rule refuses an action' }),
  },
  prediction_markets: {
    enabled: Type.Boolean({ description: 'Whether prediction-market orders may be placed' }),
    venues: Type.Array(Type.Enum(PREDICTION_MARKET_VENUES), {
      uniqueItems: true,
      description: 'Prediction-market venue allowlist',
    }),
    max_order_usd: usd('Largest single order (price × size)'),
    max_exposure_usd: usd('Largest sum of open orders and held positions at cost'),
    max_market_exposure_usd: usd(
      'Largest sum of open orders and held positions at cost in any one market (condition id); 0 is off',
    ),
    min_price: price('Lowest limit price per share an order may carry (0 is off)'),
    max_price: price('Highest limit price per share an order may carry (1 is off)'),
    markets: Type.Array(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }), {
      uniqueItems: true,
      maxItems: 200,
      description: 'Markets (condition ids) orders may be placed in; empty allows every market',
    }),
  },
  rebalance: {
    enabled: Type.Boolean({ description: 'Whether the treasury executor may rebalance this wallet' }),
    corridors: Type.Array(
      Type.Object(
        {
          from_chain_id: Type.Enum(POLICY_CHAIN_IDS),
          to_chain_id: Type.Enum(POLICY_CHAIN_IDS),
        },
        { additionalProperties: false },
      ),
      { maxItems: 6, description: 'Allowed CCTP corridors (native USDC burn and mint)' },
    ),
    min_transfer_usd: usd('Smallest rebalance transfer'),
    max_transfer_usd: usd('Largest rebalance transfer'),
    daily_cap_usd: usd('Cap on the sum of one UTC day of rebalances that did not end aborted or cancelled'),
    max_fee_bps: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: 'Fast transfers: the most Circle may keep as its fee, in basis points of the amount',
    }),
    finality: Type.Union([Type.Literal('standard'), Type.Literal('fast')], {
      description: 'standard: minted once the burn is finalized (no fee); fast: once confirmed, for a fee',
    }),
  },
} as const;

export const SECTION_NAMES = [
  'float',
  'execution',
  'gas',
  'stables',
  'spend',
  'alerts',
  'prediction_markets',
  'rebalance',
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

export const FloatSection = section('The stable float the wallet keeps', FIELDS.float);
export const ExecutionSection = section('How conversions execute', FIELDS.execution);
export const GasSection = section('Gas top-ups', FIELDS.gas);
export const StablesSection = section('Which stables count as USD', FIELDS.stables);
export const SpendSection = section('Spend caps and screening', FIELDS.spend);
export const AlertsSection = section('When the policy emits alerts', FIELDS.alerts);
export const PredictionMarketsSection = section('Prediction-market orders', FIELDS.prediction_markets);
export const RebalanceSection = section('Cross-chain USDC rebalances', FIELDS.rebalance);

const WALLET = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'Wallet address' });

/** The body of PUT /v1/policies: every section optional, every field inside a section optional. */
export const PolicyDocumentInput = Type.Object(
  {
    version: Type.Literal(1),
    wallet: WALLET,
    chain_id: Type.Enum(POLICY_CHAIN_IDS),
    float: Type.Optional(FloatSection),
    execution: Type.Optional(ExecutionSection),
    gas: Type.Optional(GasSection),
    stables: Type.Optional(StablesSection),
    spend: Type.Optional(SpendSection),
    alerts: Type.Optional(AlertsSection),
    prediction_markets: Type.Optional(PredictionMarketsSection),
    rebalance: Type.Optional(RebalanceSection),
  },
  { additionalProperties: false },
);
export type PolicyDocumentInput = Static<typeof PolicyDocumentInput>;

type Filled<S> = { [K in keyof S]-?: Exclude<S[K], undefined> };

/** A stored document: every section and field present (older documents may lack later fields). */
export interface PolicyDocument {
  version: 1;
  wallet: string;
  chain_id: PolicyChainId;
  float: Filled<Static<typeof FloatSection>>;
  execution: Filled<Static<typeof ExecutionSection>>;
  gas: Filled<Static<typeof GasSection>>;
  stables: Filled<Static<typeof StablesSection>>;
  spend: Filled<Omit<Static<typeof SpendSection>, 'approvals'>> & { approvals?: SpendApprovals };
  alerts: Filled<Static<typeof AlertsSection>>;
  prediction_markets: Filled<Static<typeof PredictionMarketsSection>>;
  rebalance: Filled<Static<typeof RebalanceSection>>;
}

export type PolicySections = Omit<PolicyDocument, 'version' | 'wallet' | 'chain_id'>;

/**
 * The published platform defaults of a chain. Three lists depend on the chain's registry entry:
 * `execution.venues` (its venues that settle conversions), `stables.accepted` (its USD stables)
 * and `spend.token_allowlist` (all of its tokens).
 */
export function platformDefaults(registry: TokenRegistry, chainId: PolicyChainId): PolicySections {
  const chain = registry.chain(chainId);
  const tokens = chain?.tokens ?? [];
  return {
    float: { min_usd: '0', target_usd: '0' },
    execution: {
      max_slippage_bps: 50,
      venues: (chain?.venues ?? [])
        .filter((v) => v.settles && registry.conversionVenues().includes(v.name))
        .map((v) => v.name),
      deadline_minutes: 30,
    },
    gas: { enabled: true, max_top_up_usd: '5' },
    stables: { accepted: tokens.filter((t) => t.stable).map((t) => t.symbol), max_depeg_bps: 100 },
    spend: {
      per_tx_usd: '100',
      daily_usd: '1000',
      velocity_per_hour: 30,
      token_allowlist: tokens.map((t) => t.symbol),
      screening_required_above_usd: '0',
    },
    alerts: { daily_usage_pct: 80, on_refusal: true },
    prediction_markets: {
      enabled: false,
      venues: ['polymarket'],
      max_order_usd: '25',
      max_exposure_usd: '250',
      max_market_exposure_usd: '0',
      min_price: '0',
      max_price: '1',
      markets: [],
    },
    rebalance: {
      enabled: false,
      corridors: [],
      min_transfer_usd: '10',
      max_transfer_usd: '10000',
      daily_cap_usd: '50000',
      max_fee_bps: 5,
      finality: 'standard',
    },
  };
}

export interface FilledDocument {
  document: PolicyDocument;
  /** Sections (`spend`) and fields (`spend.daily_usd`) taken from the defaults, in document order. */
  defaulted: string[];
}

/**
 * Fills what the input omits from the platform defaults, per section and per field: an omitted
 * section is listed as `spend`, an omitted field of a given section as `spend.daily_usd`. The
 * wallet is stored lowercase. The result has a fixed key order (the hash does not depend on it).
 * Filling a stored document is the identity, and filling an older stored document adds only
 * the fields introduced after it was written.
 */
export function fillDefaults(input: PolicyDocumentInput, registry: TokenRegistry): FilledDocument {
  const defaults = platformDefaults(registry, input.chain_id);
  const defaulted: string[] = [];
  const sections: Record<string, Record<string, unknown>> = {};
  for (const name of SECTION_NAMES) {
    const given = input[name] as Record<string, unknown> | undefined;
    const base = defaults[name] as unknown as Record<string, unknown>;
    if (given === undefined) {
      defaulted.push(name);
      sections[name] = structuredClone(base);
      continue;
    }
    const out: Record<string, unknown> = {};
    for (const field of Object.keys(base)) {
      if (given[field] === undefined) {
        defaulted.push(`${name}.${field}`);
        out[field] = structuredClone(base[field]);
      } else {
        out[field] = given[field];
      }
    }
    for (const field of UNDEFAULTED_FIELDS[name] ?? []) {
      if (given[field] !== undefined) out[field] = structuredClone(given[field]);
    }
    // Approvers are compared as addresses: stored lowercase, as the wallet is.
    const approvals = out['approvals'] as SpendApprovals | undefined;
    if (approvals) approvals.approvers = approvals.approvers.map((a) => a.toLowerCase());
    sections[name] = out;
  }
  return {
    document: {
      version: 1,
      wallet: input.wallet.toLowerCase(),
      chain_id: input.chain_id,
      ...(sections as unknown as PolicySections),
    },
    defaulted,
  };
}

/**
 * The checks a JSON schema cannot express; returns one problem per bad field (empty when the
 * document is valid). Symbols must be the chain's registry symbols verbatim (UPPERCASE), venues
 * must be venues of the chain that settle conversions, amounts at most 10^12 USD, and ranges
 * ordered.
 */
export function documentProblems(doc: PolicyDocument, registry: TokenRegistry): string[] {
  const problems: string[] = [];
  const chain = registry.chain(doc.chain_id);
  if (!chain) return [`chain_id ${doc.chain_id} is not served by this deployment`];
  for (const [name, fields] of Object.entries(FIELDS)) {
    const values = (doc as unknown as Record<string, Record<string, unknown>>)[name] ?? {};
    for (const [field, schema] of Object.entries(fields)) {
      const v = values[field];
      const isUsd = (schema as { pattern?: string }).pattern === USD_PATTERN;
      if (isUsd && typeof v === 'string' && parseUsd(v) === null) {
        problems.push(`${name}.${field} must be a USD amount of at most ${MAX_USD_MICRO / 1_000_000n}`);
      }
    }
  }
  const settling = new Set(chain.venues.filter((v) => v.settles).map((v) => v.name as string));
  doc.execution.venues.forEach((v, i) => {
    if (!settling.has(v)) {
      problems.push(
        `execution.venues[${i}] "${v}" is not a venue that settles conversions on chain ${chain.chainId} ` +
          `(${settling.size ? [...settling].join(', ') : 'none there'})`,
      );
    }
  });
  doc.spend.token_allowlist.forEach((s, i) => {
    if (!chain.tokens.some((t) => t.symbol === s)) {
      problems.push(`spend.token_allowlist[${i}] "${s}" is not a registry symbol of chain ${chain.chainId}`);
    }
  });
  doc.stables.accepted.forEach((s, i) => {
    const token = chain.tokens.find((t) => t.symbol === s);
    if (!token)
      problems.push(`stables.accepted[${i}] "${s}" is not a registry symbol of chain ${chain.chainId}`);
    else if (!token.stable) problems.push(`stables.accepted[${i}] "${s}" is not a USD stable`);
  });
  const ordered = (low: string, high: string, lowName: string, highName: string) => {
    const a = parseUsd(low);
    const b = parseUsd(high);
    if (a !== null && b !== null && a > b) problems.push(`${lowName} must not exceed ${highName}`);
  };
  ordered(doc.float.min_usd, doc.float.target_usd, 'float.min_usd', 'float.target_usd');
  ordered(
    doc.rebalance.min_transfer_usd,
    doc.rebalance.max_transfer_usd,
    'rebalance.min_transfer_usd',
    'rebalance.max_transfer_usd',
  );
  ordered(
    doc.rebalance.max_transfer_usd,
    doc.rebalance.daily_cap_usd,
    'rebalance.max_transfer_usd',
    'rebalance.daily_cap_usd',
  );
  ordered(doc.spend.per_tx_usd, doc.spend.daily_usd, 'spend.per_tx_usd', 'spend.daily_usd');
  ordered(
    doc.prediction_markets.min_price,
    doc.prediction_markets.max_price,
    'prediction_markets.min_price',
    'prediction_markets.max_price',
  );
  const approvals = doc.spend.approvals;
  if (approvals) {
    if (approvals.quorum > approvals.approvers.length)
      problems.push(
        `spend.approvals.quorum (${approvals.quorum}) must not exceed the number of approvers (${approvals.approvers.length})`,
      );
    if (new Set(approvals.approvers.map((a) => a.toLowerCase())).size !== approvals.approvers.length)
      problems.push('spend.approvals.approvers names one address twice');
    if (parseUsd(approvals.above_usd) === null)
      problems.push(
        `spend.approvals.above_usd must be a USD amount of at most ${MAX_USD_MICRO / 1_000_000n}`,
      );
  }
  const corridors = new Set<string>();
  doc.rebalance.corridors.forEach((c, i) => {
    if (c.from_chain_id === c.to_chain_id) {
      problems.push(`rebalance.corridors[${i}] must join two different chains`);
    }
    const key = `${c.from_chain_id}>${c.to_chain_id}`;
    if (corridors.has(key)) problems.push(`rebalance.corridors[${i}] repeats ${key}`);
    corridors.add(key);
  });
  return problems;
}

/** SHA-256 over the RFC 8785 canonical JSON of the document as stored, lowercase hex. */
export function policyHash(document: PolicyDocument): string {
  return createHash('sha256').update(canonicalJson(document)).digest('hex');
}
