// The part of autocannon 8 the benchmark uses (the package ships no types).

declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  /** Percentiles of one histogram; latency is in milliseconds, requests and throughput per second. */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p1: number;
    p2_5: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title?: string;
    url: string;
    connections: number;
    pipelining: number;
    duration: number;
    samples: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram & { totalCount: number };
    requests: Histogram & { sent: number };
    throughput: Histogram;
    warmup?: Result;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    pipelining?: number;
    title?: string;
    warmup?: { connections?: number; duration?: number };
    /** Requests per second over all connections (open loop at that rate). */
    overallRate?: number;
    /** Each request may be rewritten by `setupRequest` before it is sent. */
    requests?: {
      setupRequest?: (req: { headers?: Record<string, string>; body?: string }) => unknown;
    }[];
  }

  /** `stop` ends the run early; absent while a warm-up runs. */
  export type Instance = EventEmitter & PromiseLike<Result> & { stop?: () => void };

  function autocannon(options: Options): Instance;
  export default autocannon;
}
