// A loopback fake of Circle's attestation service (Iris) for CCTP V2, in Iris's formats:
// `GET /v2/messages/{sourceDomainId}?transactionHash=…` (or `&nonce=…`) and
// `GET /v2/burn/USDC/fees/{sourceDomainId}/{destDomainId}` (developers.circle.com, API reference
// "get-messages-v2" and "get-transfer-fee"). It watches the devnet chains the way Iris watches
// real ones: a burn's transaction is unknown (404) until it has a receipt with `MessageSent` from
// the source domain's transmitter; its messages are then `pending_confirmations` (attestation
// "PENDING", the message as emitted) until the confirmations and the delay have passed, and then
// `complete`: the message with Iris's fields filled (nonce, finalityThresholdExecuted, and for a
// burn feeExecuted and expirationBlock) and signed by the attester key, as
// DevMessageTransmitterV2 (like Circle's MessageTransmitterV2) verifies it. Development and tests
// only.
//
// Not documented by Circle, so chosen here: the bodies of the 404, 400, 429 and 5xx answers
// (`{"error": "…"}`), the non-ready status string (`pending_confirmations`, as Iris's V1
// attestation endpoint documents it; a knob changes it, since Circle's troubleshooting page calls
// it `pending`), and how the nonce is made (keccak256 of domain ‖ transaction hash ‖ log index).

import {
  bytesToHex,
  createPublicClient,
  decodeEventLog,
  encodePacked,
  getAddress,
  hexToBigInt,
  hexToBytes,
  http,
  keccak256,
  numberToHex,
  parseAbi,
  toEventSelector,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import {
  defaultKnobs,
  MALFORMED_BODY,
  rateLimited,
  serveFake,
  type FakeAnswer,
  type FakeKnobs,
  type FakeRequest,
  type RunningFake,
} from './loopback.ts';

/** Where the fake watches one chain. */
export interface IrisFakeChain {
  rpcUrl: string;
  /** The chain's CCTP domain (Base 6, Polygon 7). */
  domain: number;
  /** The chain's MessageTransmitterV2: only its `MessageSent` events count. */
  messageTransmitter: Address;
  /**
   * The chain's TokenMessengerV2. When given, only messages it sent are read as burn messages
   * (fee and expiration filled, `decodedMessageBody` set); without it, any message whose body is
   * long enough for a BurnMessageV2 and says version 1 is.
   */
  tokenMessenger?: Address;
}

export interface IrisFakeOptions {
  /** Chain id → where to watch it. */
  chains: Record<number, IrisFakeChain>;
  /** The key whose signatures the transmitters accept (DEVNET_CCTP_ATTESTER_PRIVATE_KEY on the devnet). */
  attesterPrivateKey: Hex;
  /** Fast Transfer fee in basis points, may be fractional (default 1, Circle's Base → Polygon fee). Also a knob. */
  fastFeeBps?: number;
  /** How long a burn stays pending after the fake first sees it, in ms (default 0). Also a knob. */
  delayMs?: number;
  /**
   * Blocks on the source chain (the burn's own block counts as 1) before a message is attested:
   * `fast` for Fast Transfers (finality 1000), `standard` for the rest (finality 2000). Default 1
   * each: on the devnet a burn is final once mined.
   */
  confirmations?: { fast?: number; standard?: number };
  /**
   * A burn message's expirationBlock: the destination chain's block number when the message is
   * attested plus this (default 7200). null: 0, never expires.
   */
  expirationBlocks?: number | null;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface IrisFakeKnobs extends FakeKnobs {
  /** How long a newly seen burn stays pending, in ms (only messages not yet attested). */
  delayMs: number;
  /** Fast Transfer fee in bps, for the fee endpoint and for messages attested from now on. */
  fastFeeBps: number;
  /** The status of a message not yet attested (`pending_confirmations`; Circle's docs also say `pending`). */
  pendingStatus: string;
  /**
   * Iris's rate limit: more requests than this in one second, and every request is answered 429
   * for `rateLimitBlockMs` (Iris allows 35 per second and blocks for 5 minutes). null: no limit.
   * `rateLimitRetryAfter` (set) answers 429 to every request regardless.
   */
  requestsPerSecond: number | null;
  rateLimitBlockMs: number;
}

export interface IrisFake extends RunningFake<IrisFakeKnobs> {
  /** The attester's address (what the transmitters were deployed with). */
  attester: Address;
  /** Keeps the messages of this burn transaction pending (until release) unless already attested. */
  hold(txHash: Hex): void;
  release(txHash: Hex): void;
}

/** Iris's body for a transaction or nonce it has no message for (404). */
export const IRIS_NOT_FOUND_BODY = { error: 'Message not found' } as const;
export const IRIS_RATE_LIMITED_BODY = { error: 'Too Many Requests' } as const;

/** What `GET /v2/messages` answers per message (Circle's get-messages-v2 shape). */
export interface IrisMessage {
  message: Hex;
  eventNonce: Hex;
  attestation: Hex | 'PENDING';
  cctpVersion: 2;
  status: string;
  decodedMessage: IrisDecodedMessage;
  delayReason?: string;
}

export interface IrisDecodedMessage {
  sourceDomain: string;
  destinationDomain: string;
  nonce: Hex;
  sender: Address;
  recipient: Address;
  destinationCaller: Address;
  minFinalityThreshold: string;
  finalityThresholdExecuted: string;
  messageBody: Hex;
  decodedMessageBody: {
    burnToken: Address;
    mintRecipient: Address;
    amount: string;
    messageSender: Address;
    maxFee: string;
    feeExecuted: string;
    expirationBlock: string;
    hookData: Hex;
  } | null;
}

const messageSentAbi = parseAbi(['event MessageSent(bytes message)']);
const MESSAGE_SENT_TOPIC = toEventSelector('MessageSent(bytes)');

/** MessageV2 byte offsets (MessageV2.sol). */
const M = {
  version: 0,
  sourceDomain: 4,
  destinationDomain: 8,
  nonce: 12,
  sender: 44,
  recipient: 76,
  destinationCaller: 108,
  minFinalityThreshold: 140,
  finalityThresholdExecuted: 144,
  body: 148,
} as const;
/** BurnMessageV2 byte offsets within the message body (BurnMessageV2.sol). */
const B = {
  version: 0,
  burnToken: 4,
  mintRecipient: 36,
  amount: 68,
  messageSender: 100,
  maxFee: 132,
  feeExecuted: 164,
  expirationBlock: 196,
  hookData: 228,
} as const;

const FINALITY_FAST = 1000;
const FINALITY_STANDARD = 2000;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

const u32 = (bytes: Uint8Array, at: number): number =>
  new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0, false);
const word = (bytes: Uint8Array, at: number): Hex => bytesToHex(bytes.subarray(at, at + 32));
const wordAddress = (bytes: Uint8Array, at: number): Address =>
  getAddress(bytesToHex(bytes.subarray(at + 12, at + 32)));

/** The Fast Transfer fee Iris charges for `amount` at `bps` basis points: rounded up. */
export function fastTransferFee(amount: bigint, bps: number): bigint {
  // bps may be fractional (Circle quotes e.g. 1.3): in millionths of a basis point.
  const micro = BigInt(Math.round(bps * 1_000_000));
  const denominator = 10_000n * 1_000_000n;
  return (amount * micro + denominator - 1n) / denominator;
}

interface SeenMessage {
  logIndex: number;
  /** As emitted by the transmitter. */
  emitted: Uint8Array;
  nonce: Hex;
  burn: boolean;
  completed: Promise<{ message: Hex; attestation: Hex }> | null;
}

interface SeenTx {
  chainId: number;
  txHash: Hex;
  blockNumber: bigint;
  firstSeenAt: number;
  messages: SeenMessage[];
}

interface Watched extends IrisFakeChain {
  chainId: number;
  client: PublicClient;
}

export async function startIrisFake(options: IrisFakeOptions): Promise<IrisFake> {
  const attester = privateKeyToAccount(options.attesterPrivateKey);
  const confirmations = {
    fast: options.confirmations?.fast ?? 1,
    standard: options.confirmations?.standard ?? 1,
  };
  const expirationBlocks = options.expirationBlocks === undefined ? 7200 : options.expirationBlocks;
  for (const [name, value] of [
    ['confirmations.fast', confirmations.fast],
    ['confirmations.standard', confirmations.standard],
    ['expirationBlocks', expirationBlocks ?? 0],
  ] as const) {
    if (!Number.isInteger(value) || value < 0)
      throw new Error(`startIrisFake: ${name} must be an integer ≥ 0`);
  }

  const byDomain = new Map<number, Watched>();
  for (const [id, chain] of Object.entries(options.chains)) {
    const chainId = Number(id);
    if (byDomain.has(chain.domain)) throw new Error(`startIrisFake: two chains with domain ${chain.domain}`);
    byDomain.set(chain.domain, {
      ...chain,
      chainId,
      client: createPublicClient({
        chain: chainDefinition(chainId, chain.rpcUrl),
        transport: http(chain.rpcUrl, { retryCount: 1 }),
      }),
    });
  }

  const seen = new Map<string, SeenTx>();
  /** Loads of a transaction under way, so parallel requests read the chain once. */
  const loading = new Map<string, Promise<SeenTx | null>>();
  const held = new Set<string>();
  const recentRequests: number[] = [];
  let blockedUntil = 0;

  const txKey = (domain: number, txHash: Hex) => `${domain}:${txHash.toLowerCase()}`;

  function nonceOf(domain: number, txHash: Hex, logIndex: number): Hex {
    return keccak256(encodePacked(['uint32', 'bytes32', 'uint32'], [domain, txHash, logIndex]));
  }

  function isBurnMessage(chain: Watched, emitted: Uint8Array): boolean {
    if (emitted.length < M.body + B.hookData || u32(emitted, M.body + B.version) !== 1) return false;
    if (!chain.tokenMessenger) return true;
    return wordAddress(emitted, M.sender) === getAddress(chain.tokenMessenger);
  }

  async function loadTx(chain: Watched, txHash: Hex): Promise<SeenTx | null> {
    const key = txKey(chain.domain, txHash);
    const known = seen.get(key);
    if (known) return known;
    const pending = loading.get(key);
    if (pending) return pending;
    const load = (async (): Promise<SeenTx | null> => {
      let receipt;
      try {
        receipt = await chain.client.getTransactionReceipt({ hash: txHash });
      } catch (err) {
        if (err instanceof TransactionReceiptNotFoundError) return null;
        throw err;
      }
      const messages: SeenMessage[] = [];
      for (const log of receipt.logs) {
        if (log.address.toLowerCase() !== chain.messageTransmitter.toLowerCase()) continue;
        if (log.topics[0] !== MESSAGE_SENT_TOPIC) continue;
        const { args } = decodeEventLog({ abi: messageSentAbi, data: log.data, topics: log.topics });
        const emitted = hexToBytes(args.message);
        if (emitted.length < M.body) continue;
        messages.push({
          logIndex: log.logIndex,
          emitted,
          nonce: nonceOf(chain.domain, txHash, log.logIndex),
          burn: isBurnMessage(chain, emitted),
          completed: null,
        });
      }
      if (messages.length === 0) return null;
      const tx: SeenTx = {
        chainId: chain.chainId,
        txHash: receipt.transactionHash,
        blockNumber: receipt.blockNumber,
        firstSeenAt: performance.now(),
        messages: messages.sort((a, b) => a.logIndex - b.logIndex),
      };
      seen.set(key, tx);
      return tx;
    })();
    loading.set(key, load);
    try {
      return await load;
    } finally {
      loading.delete(key);
    }
  }

  /** The transaction and log index of the message with this nonce, searched in the transmitter's logs. */
  async function findByNonce(chain: Watched, nonce: Hex): Promise<SeenTx | null> {
    for (const tx of seen.values()) {
      if (byDomain.get(chain.domain)?.chainId !== tx.chainId) continue;
      if (tx.messages.some((m) => m.nonce === nonce)) return tx;
    }
    const logs = await chain.client.getLogs({
      address: chain.messageTransmitter,
      event: messageSentAbi[0],
      fromBlock: 0n,
      toBlock: 'latest',
    });
    for (const log of logs) {
      if (log.transactionHash && nonceOf(chain.domain, log.transactionHash, log.logIndex) === nonce) {
        return loadTx(chain, log.transactionHash);
      }
    }
    return null;
  }

  interface Plan {
    finality: number;
    fee: bigint;
    delayReason?: string;
  }

  /** Which finality Iris attests a message at, and the fee it takes. */
  function plan(m: SeenMessage, knobs: IrisFakeKnobs): Plan {
    const wantsFast = u32(m.emitted, M.minFinalityThreshold) <= FINALITY_FAST;
    if (!m.burn) return { finality: wantsFast ? FINALITY_FAST : FINALITY_STANDARD, fee: 0n };
    if (!wantsFast) return { finality: FINALITY_STANDARD, fee: 0n };
    const amount = hexToBigInt(word(m.emitted, M.body + B.amount));
    const maxFee = hexToBigInt(word(m.emitted, M.body + B.maxFee));
    const fee = fastTransferFee(amount, knobs.fastFeeBps);
    if (maxFee < fee) return { finality: FINALITY_STANDARD, fee: 0n, delayReason: 'insufficient_fee' };
    return { finality: FINALITY_FAST, fee };
  }

  async function fill(m: SeenMessage, p: Plan): Promise<{ message: Hex; attestation: Hex }> {
    const filled = new Uint8Array(m.emitted);
    filled.set(hexToBytes(m.nonce), M.nonce);
    new DataView(filled.buffer).setUint32(M.finalityThresholdExecuted, p.finality, false);
    if (m.burn) {
      let expiration = 0n;
      const destination = byDomain.get(u32(m.emitted, M.destinationDomain));
      if (destination && expirationBlocks !== null) {
        expiration = (await destination.client.getBlockNumber({ cacheTime: 0 })) + BigInt(expirationBlocks);
      }
      filled.set(hexToBytes(numberToHex(p.fee, { size: 32 })), M.body + B.feeExecuted);
      filled.set(hexToBytes(numberToHex(expiration, { size: 32 })), M.body + B.expirationBlock);
    }
    const message = bytesToHex(filled);
    const attestation = await attester.sign({ hash: keccak256(message) });
    return { message, attestation };
  }

  function decoded(bytes: Uint8Array): IrisDecodedMessage {
    const body = bytes.subarray(M.body);
    const burn =
      body.length >= B.hookData && u32(body, B.version) === 1
        ? {
            burnToken: wordAddress(body, B.burnToken),
            mintRecipient: wordAddress(body, B.mintRecipient),
            amount: hexToBigInt(word(body, B.amount)).toString(),
            messageSender: wordAddress(body, B.messageSender),
            maxFee: hexToBigInt(word(body, B.maxFee)).toString(),
            feeExecuted: hexToBigInt(word(body, B.feeExecuted)).toString(),
            expirationBlock: hexToBigInt(word(body, B.expirationBlock)).toString(),
            hookData: bytesToHex(body.subarray(B.hookData)),
          }
        : null;
    return {
      sourceDomain: String(u32(bytes, M.sourceDomain)),
      destinationDomain: String(u32(bytes, M.destinationDomain)),
      nonce: word(bytes, M.nonce),
      sender: wordAddress(bytes, M.sender),
      recipient: wordAddress(bytes, M.recipient),
      destinationCaller: wordAddress(bytes, M.destinationCaller),
      minFinalityThreshold: String(u32(bytes, M.minFinalityThreshold)),
      finalityThresholdExecuted: String(u32(bytes, M.finalityThresholdExecuted)),
      messageBody: bytesToHex(body),
      decodedMessageBody: burn,
    };
  }

  async function answerFor(
    tx: SeenTx,
    m: SeenMessage,
    head: bigint,
    knobs: IrisFakeKnobs,
  ): Promise<IrisMessage> {
    if (!m.completed) {
      const p = plan(m, knobs);
      const needed = p.finality === FINALITY_FAST ? confirmations.fast : confirmations.standard;
      const confirmed = head - tx.blockNumber + 1n >= BigInt(needed);
      const waited = performance.now() - tx.firstSeenAt >= knobs.delayMs;
      if (!confirmed || !waited || held.has(tx.txHash.toLowerCase())) {
        return {
          message: bytesToHex(m.emitted),
          eventNonce: m.nonce,
          attestation: 'PENDING',
          cctpVersion: 2,
          status: knobs.pendingStatus,
          decodedMessage: decoded(m.emitted),
          ...(p.delayReason ? { delayReason: p.delayReason } : {}),
        };
      }
      m.completed = fill(m, p);
      m.completed.catch(() => {
        m.completed = null; // a failed RPC read: try again on the next request
      });
    }
    const done = await m.completed;
    return {
      message: done.message,
      eventNonce: m.nonce,
      attestation: done.attestation,
      cctpVersion: 2,
      status: 'complete',
      decodedMessage: decoded(hexToBytes(done.message)),
    };
  }

  function rateLimitedNow(knobs: IrisFakeKnobs): boolean {
    const now = performance.now();
    if (now < blockedUntil) return true;
    if (knobs.requestsPerSecond === null) return false;
    while (recentRequests.length > 0 && now - (recentRequests[0] ?? 0) >= 1_000) recentRequests.shift();
    recentRequests.push(now);
    if (recentRequests.length > knobs.requestsPerSecond) {
      blockedUntil = now + knobs.rateLimitBlockMs;
      recentRequests.length = 0;
      return true;
    }
    return false;
  }

  const error = (status: number, message: string): FakeAnswer => ({ status, body: { error: message } });

  async function handle(req: FakeRequest, knobs: IrisFakeKnobs): Promise<FakeAnswer> {
    if (knobs.rateLimitRetryAfter !== null)
      return rateLimited(knobs.rateLimitRetryAfter, IRIS_RATE_LIMITED_BODY);
    if (rateLimitedNow(knobs)) {
      const seconds = Math.max(1, Math.ceil((blockedUntil - performance.now()) / 1_000));
      return rateLimited(String(seconds), IRIS_RATE_LIMITED_BODY);
    }
    if (knobs.serverError !== null) return error(knobs.serverError, 'Internal Server Error');
    if (knobs.malformedJson) return { status: 200, body: MALFORMED_BODY };
    if (req.method !== 'GET') return error(404, 'Not Found');

    const fees = /^\/v2\/burn\/USDC\/fees\/(\d+)\/(\d+)$/.exec(req.path);
    if (fees) {
      const source = Number(fees[1]);
      const destination = Number(fees[2]);
      if (!byDomain.has(source) || !byDomain.has(destination) || source === destination) {
        return error(400, 'Invalid source or destination domain');
      }
      return {
        status: 200,
        body: [
          { finalityThreshold: FINALITY_FAST, minimumFee: knobs.fastFeeBps },
          { finalityThreshold: FINALITY_STANDARD, minimumFee: 0 },
        ],
      };
    }

    const messages = /^\/v2\/messages\/(\d+)$/.exec(req.path);
    if (!messages) return error(404, 'Not Found');
    const chain = byDomain.get(Number(messages[1]));
    const txHash = req.query.transactionHash;
    const nonce = req.query.nonce;
    if (txHash === undefined && nonce === undefined) {
      return error(400, 'At least one of transactionHash or nonce is required');
    }
    if (txHash !== undefined && !TX_HASH.test(txHash)) return error(400, 'Invalid transactionHash');
    if (nonce !== undefined && !TX_HASH.test(nonce)) return error(400, 'Invalid nonce');
    if (!chain) return { status: 404, body: IRIS_NOT_FOUND_BODY };

    let tx: SeenTx | null;
    if (txHash !== undefined) tx = await loadTx(chain, txHash as Hex);
    else tx = await findByNonce(chain, (nonce as string).toLowerCase() as Hex);
    if (!tx) return { status: 404, body: IRIS_NOT_FOUND_BODY };
    const picked = tx.messages.filter((m) => nonce === undefined || m.nonce === nonce.toLowerCase());
    if (picked.length === 0) return { status: 404, body: IRIS_NOT_FOUND_BODY };

    const head = await chain.client.getBlockNumber({ cacheTime: 0 });
    const answers: IrisMessage[] = [];
    for (const m of picked) answers.push(await answerFor(tx, m, head, knobs));
    return { status: 200, body: { messages: answers } };
  }

  const fake = await serveFake<IrisFakeKnobs>({
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    knobs: () => ({
      ...defaultKnobs(),
      delayMs: options.delayMs ?? 0,
      fastFeeBps: options.fastFeeBps ?? 1,
      pendingStatus: 'pending_confirmations',
      requestsPerSecond: null,
      rateLimitBlockMs: 300_000,
    }),
    handle,
    internalError: () => ({ error: 'Internal Server Error' }),
  });

  return {
    ...fake,
    reset: () => {
      fake.reset();
      held.clear();
      recentRequests.length = 0;
      blockedUntil = 0;
    },
    attester: attester.address,
    hold: (txHash) => {
      held.add(txHash.toLowerCase());
    },
    release: (txHash) => {
      held.delete(txHash.toLowerCase());
    },
  };
}
