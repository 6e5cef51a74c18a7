// Rate lane configuration: the typed shape of one lane, the Polymarket defaults, and the parser of
// the PM_RATE_LANES setting (called by src/config.ts, which owns process.env). No database here,
// so configuration can import this file alone; the rate lanes module (src/modules/ratelanes/)
// takes tokens from the lanes configured here.

/** A token bucket: up to `capacity` tokens, refilled continuously at `refillPerSecond`. */
export interface RateLaneConfig {
  /** The burst: how many calls a full lane admits at once. */
  capacity: number;
  /** The sustained rate: tokens added per second, continuously (not once a second). */
  refillPerSecond: number;
}

/** The lanes of one prediction-market venue. Cancels have their own lane: the order cap never applies to them. */
export const PM_RATE_LANE_KINDS = ['orders', 'reads', 'cancels'] as const;
export type PmRateLaneKind = (typeof PM_RATE_LANE_KINDS)[number];
export type PmRateLanes = Record<PmRateLaneKind, RateLaneConfig>;

/**
 * Platform-wide defaults for Polymarket: what every account of one deployment together may send.
 *
 * Polymarket publishes its CLOB limits per endpoint, enforced per IP by Cloudflare (POST /order:
 * 3,500 per 10 s burst and 36,000 per 10 min sustained, i.e. 60 per second; the ledger reads
 * /orders and /trades: 900 per 10 s, i.e. 90 per second), and separate order and cancel token
 * buckets per signer address. A self-hosted deployment sends every account's calls from its own
 * egress address, so the IP limits are in effect a platform aggregate, and Cloudflare over the
 * limit delays and queues rather than refusing, which would spend the request's time budget
 * waiting. So these defaults sit well under the published numbers (about a sixth for orders, a
 * fifth for reads), leaving room for other traffic from the same address, for several deployments
 * behind one NAT, and for the limits to tighten, and we refuse at once with 429 and Retry-After:
 *
 * - orders: 50 burst, 10 per second. A burst of 50 covers an agent fleet's rebalance at the same
 *   instant; 10 per second sustained is 600 orders a minute across the platform.
 * - reads: 100 burst, 20 per second. Reads are cheaper for the venue and agents poll them, so a
 *   larger bucket; still a fifth of the published ledger-read rate.
 * - cancels: 100 burst, 20 per second. A separate lane so spent order budget never blocks a
 *   cancel (the spec exempts cancels from the order cap), and more generous than orders because
 *   cancelling reduces risk and a panic cancels everything at once.
 */
export const POLYMARKET_RATE_LANES: PmRateLanes = {
  orders: { capacity: 50, refillPerSecond: 10 },
  reads: { capacity: 100, refillPerSecond: 20 },
  cancels: { capacity: 100, refillPerSecond: 20 },
};

/** The stored name of a venue's lane: `polymarket:orders`. */
export function rateLaneName(venue: string, kind: PmRateLaneKind): string {
  return `${venue}:${kind}`;
}

/** Bounds a setting must stay within (a million a second is no limit at all; a lane must refill). */
export const RATE_LANE_MAX_CAPACITY = 1_000_000;
export const RATE_LANE_MAX_REFILL_PER_SECOND = 1_000_000;
export const RATE_LANE_MIN_REFILL_PER_SECOND = 0.001;

export interface ParsedPmRateLanes {
  /** The defaults with every valid override applied (an invalid one leaves its default). */
  lanes: PmRateLanes;
  problems: string[];
}

/**
 * Parses a setting such as
 * `{"orders":{"capacity":50,"refill_per_second":10},"reads":{"capacity":100,"refill_per_second":20}}`.
 * Unset or empty means the defaults. A lane left out keeps its default, and so does a field left
 * out of a lane. Every mistake is a problem string naming the setting (`name`), for the caller to
 * report with the other configuration problems.
 */
export function parsePmRateLanes(
  raw: string | undefined,
  name = 'PM_RATE_LANES',
  defaults: PmRateLanes = POLYMARKET_RATE_LANES,
): ParsedPmRateLanes {
  const lanes: PmRateLanes = {
    orders: { ...defaults.orders },
    reads: { ...defaults.reads },
    cancels: { ...defaults.cancels },
  };
  const problems: string[] = [];
  if (raw === undefined || raw.trim() === '') return { lanes, problems };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return {
      lanes,
      problems: [`${name} must be a JSON object such as {"orders":{"capacity":50,"refill_per_second":10}}`],
    };
  }
  if (!isObject(parsed)) {
    return { lanes, problems: [`${name} must be a JSON object of lanes (${PM_RATE_LANE_KINDS.join(', ')})`] };
  }
  for (const [kind, value] of Object.entries(parsed)) {
    if (!(PM_RATE_LANE_KINDS as readonly string[]).includes(kind)) {
      problems.push(`${name}: unknown lane "${kind}" (the lanes are ${PM_RATE_LANE_KINDS.join(', ')})`);
      continue;
    }
    const lane = lanes[kind as PmRateLaneKind];
    if (!isObject(value)) {
      problems.push(`${name}.${kind} must be an object with capacity and refill_per_second`);
      continue;
    }
    for (const [field, v] of Object.entries(value)) {
      if (field === 'capacity') {
        if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= RATE_LANE_MAX_CAPACITY) {
          lane.capacity = v;
        } else {
          problems.push(
            `${name}.${kind}.capacity must be a whole number from 1 to ${RATE_LANE_MAX_CAPACITY} (got ${JSON.stringify(v)})`,
          );
        }
      } else if (field === 'refill_per_second') {
        if (
          typeof v === 'number' &&
          Number.isFinite(v) &&
          v >= RATE_LANE_MIN_REFILL_PER_SECOND &&
          v <= RATE_LANE_MAX_REFILL_PER_SECOND
        ) {
          lane.refillPerSecond = v;
        } else {
          problems.push(
            `${name}.${kind}.refill_per_second must be a number from ${RATE_LANE_MIN_REFILL_PER_SECOND} to ${RATE_LANE_MAX_REFILL_PER_SECOND} (got ${JSON.stringify(v)})`,
          );
        }
      } else {
        problems.push(
          `${name}.${kind}: unknown field "${field}" (the fields are capacity, refill_per_second)`,
        );
      }
    }
  }
  return { lanes, problems };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
