// Circle's attestation service (Iris V2): `GET /v2/messages/{sourceDomain}?transactionHash=…`.
// A 404 and every status but `complete` mean "not ready" (protocols.md 5.4). Iris allows 35
// requests a second and answers 429 beyond that, after which it wants five minutes of quiet:
// this adapter paces its own requests below the limit and, after a 429, asks nothing until the
// five minutes have passed.

import { isHex, type Hex } from 'viem';
import type { Clock } from '../../core/clock.ts';
import { AttestationUnavailable, type AttestationLookup, type AttestationPort } from './port.ts';

export interface IrisAdapterOptions {
  baseUrl: string;
  clock: Clock;
  timeoutMs: number;
  /** Most requests per second from this process. */
  maxPerSecond: number;
  /** Quiet time after a 429 (default 5 minutes, as Circle asks). */
  rateLimitPauseMs?: number;
  fetch?: typeof fetch;
}

/** How soon to ask again about a burn Iris has not attested yet. */
const RETRY_NOT_READY_MS = 5_000;

interface IrisMessage {
  message?: unknown;
  attestation?: unknown;
  status?: unknown;
  delayReason?: unknown;
}

export function createIrisAdapter(options: IrisAdapterOptions): AttestationPort {
  const doFetch = options.fetch ?? fetch;
  const pauseMs = options.rateLimitPauseMs ?? 300_000;
  const spacingMs = Math.ceil(1000 / options.maxPerSecond);
  let quietUntil = 0;
  let nextSlot = 0;

  /** Waits for this process's next request slot (requests spaced evenly under the limit). */
  const paced = async () => {
    const now = performance.now();
    const at = Math.max(now, nextSlot);
    nextSlot = at + spacingMs;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  };

  return {
    async lookup(sourceDomain, txHash): Promise<AttestationLookup> {
      const now = options.clock.now().getTime();
      if (now < quietUntil) return { ready: false, why: 'rate_limited', retryAfterMs: quietUntil - now };
      await paced();
      const url = `${options.baseUrl}/v2/messages/${sourceDomain}?transactionHash=${txHash}`;
      let res: Response;
      try {
        res = await doFetch(url, {
          headers: { accept: 'application/json' },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (err) {
        throw new AttestationUnavailable(`the attestation service did not answer: ${(err as Error).message}`);
      }
      if (res.status === 404) {
        await res.body?.cancel();
        return { ready: false, why: 'not_found', retryAfterMs: RETRY_NOT_READY_MS };
      }
      if (res.status === 429) {
        await res.body?.cancel();
        // Quiet for Circle's five minutes, or longer when Iris asks for longer.
        const asked = Number(res.headers.get('retry-after')) * 1000;
        const quietMs = Number.isFinite(asked) && asked > pauseMs ? asked : pauseMs;
        quietUntil = options.clock.now().getTime() + quietMs;
        return { ready: false, why: 'rate_limited', retryAfterMs: quietMs };
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new AttestationUnavailable(`the attestation service answered ${res.status}`);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        throw new AttestationUnavailable('the attestation service answered something other than JSON');
      }
      const messages = (body as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages) || messages.length === 0) {
        return { ready: false, why: 'not_found', retryAfterMs: RETRY_NOT_READY_MS };
      }
      const first = messages[0] as IrisMessage;
      const status = typeof first.status === 'string' ? first.status : 'unknown';
      const delayReason = typeof first.delayReason === 'string' ? { delayReason: first.delayReason } : {};
      const { message, attestation } = first;
      if (
        status === 'complete' &&
        typeof message === 'string' &&
        isHex(message) &&
        message.length > 2 &&
        typeof attestation === 'string' &&
        isHex(attestation) &&
        attestation.length > 2
      ) {
        return { ready: true, status: 'complete', message: message as Hex, attestation: attestation as Hex };
      }
      return { ready: false, why: 'pending', status, ...delayReason, retryAfterMs: RETRY_NOT_READY_MS };
    },
  };
}
