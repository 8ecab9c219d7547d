/**
 * The hand-written half of the SDK: the retry policy and the status poll. Everything that speaks HTTP is
 * generated from openapi.yaml into ./generated; this file only decides when to send again, with which
 * key, and how long to wait.
 *
 * Guarantees: one Idempotency-Key per intent, reused on every attempt; a retry only after a network
 * error, a timeout, 409, 429 or 503 (and 502/504 from a gateway in front of the service); never after
 * 400, 401, 403, 422 or any other answer; Retry-After is followed when the service sends it, otherwise
 * exponential backoff with full jitter; no attempt starts after the budget is spent. The lookup by key
 * (findByIdempotencyKey) is retried the same way.
 */
import { Configuration, FetchError, OperationsApi, ResponseError, TransfersApi } from './generated/index.js';
import type { FeedEvent, Transfer, TransferRequest } from './generated/index.js';

/** How hard to try. Every field has a default; see DEFAULT_POLICY. */
export interface RetryPolicy {
  /** Total time for one intent, attempts and waits together; no attempt starts after it (ms). */
  budgetMs: number;
  /** One attempt's timeout (ms); a timed-out attempt is retried with the same key. */
  attemptTimeoutMs: number;
  /** The first backoff step (ms), doubled per attempt, when the answer carries no Retry-After. */
  baseDelayMs: number;
  /** The largest backoff step (ms). */
  maxDelayMs: number;
}

export const DEFAULT_POLICY: RetryPolicy = { budgetMs: 30_000, attemptTimeoutMs: 10_000, baseDelayMs: 250, maxDelayMs: 8_000 };

/** Statuses after which the same request, with the same key, may succeed. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([409, 429, 502, 503, 504]);

/** One retry about to happen, for logs and tests. */
export interface RetryEvent {
  attempt: number;
  idempotencyKey: string;
  /** The status that caused it, or undefined after a network error or timeout. */
  status?: number;
  /** What went wrong at the network level, when no status arrived. */
  error?: string;
  /** How long the client waits before the next attempt (ms). */
  delayMs: number;
  /** Whether the delay is the service's Retry-After rather than the client's own backoff. */
  fromRetryAfter: boolean;
}

export interface ClientOptions {
  baseUrl: string;
  /** A bearer token, or a function that returns a fresh one for each attempt. */
  token: string | (() => string | Promise<string>);
  policy?: Partial<RetryPolicy>;
  onRetry?: (event: RetryEvent) => void;
  fetchApi?: typeof fetch;
  /** For tests: a source of randomness in [0, 1) for the jitter. */
  random?: () => number;
}

export interface Created {
  transfer: Transfer;
  /** The key this intent was sent under; keep it to retry the intent later yourself. */
  idempotencyKey: string;
  /** True when the service answered with an earlier result for this key (Idempotent-Replayed: true). */
  replayed: boolean;
  location: string | null;
  etag: string | null;
  attempts: number;
}

/** The service answered with a status that retrying cannot change (400, 401, 403, 422, ...). */
export class TransferRejected extends Error {
  constructor(readonly status: number, readonly problem: unknown, readonly idempotencyKey: string) {
    super(`the service answered ${status}${problemTitle(problem)}`);
    this.name = 'TransferRejected';
  }
}

/** The budget ran out before an attempt succeeded; the intent may or may not have been created. */
export class RetryBudgetExhausted extends Error {
  constructor(readonly attempts: number, readonly idempotencyKey: string, readonly lastStatus?: number) {
    super(`gave up after ${attempts} attempt(s)${lastStatus ? `, the last answered ${lastStatus}` : ''}: retry later with the same key`);
    this.name = 'RetryBudgetExhausted';
  }
}

/** A fresh key for a new intent: a random UUID. */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

const FINAL = new Set(['sent', 'failed']);

/** Creates transfers and follows them, with the retry policy above. */
export class LedgerlineClient {
  private readonly api: TransfersApi;
  /** The collection read of GET /v1/transfers, which the contract tags Operations; the lookup by key uses it. */
  private readonly collection: OperationsApi;
  private readonly policy: RetryPolicy;
  private readonly random: () => number;

  constructor(private readonly options: ClientOptions) {
    const token = options.token;
    const configuration = new Configuration({
      basePath: options.baseUrl.replace(/\/$/, ''),
      accessToken: async () => (typeof token === 'string' ? token : await token()),
      fetchApi: options.fetchApi,
    });
    this.api = new TransfersApi(configuration);
    this.collection = new OperationsApi(configuration);
    this.policy = { ...DEFAULT_POLICY, ...options.policy };
    this.random = options.random ?? Math.random;
  }

  /**
   * Sends one intent. Pass the key of an intent you already sent (for instance after a crash) to
   * continue it; leave it out for a new intent.
   */
  async createTransfer(request: TransferRequest, idempotencyKey: string = newIdempotencyKey()): Promise<Created> {
    return this.withRetries(idempotencyKey, async (attempt) => {
      const response = await this.api.createTransferRaw({ idempotencyKey, transferRequest: request },
        { signal: timeout(this.policy.attemptTimeoutMs) });
      const headers = response.raw.headers;
      return {
        transfer: await response.value(),
        idempotencyKey,
        replayed: headers.get('Idempotent-Replayed') === 'true',
        location: headers.get('Location'),
        etag: headers.get('ETag'),
        attempts: attempt,
      };
    });
  }

  /**
   * The transfer this principal created under idempotencyKey, or undefined when there is none
   * (GET /v1/transfers?idempotencyKey=). For a response that was lost: after a crash or a reload, or when
   * RetryBudgetExhausted left it open whether the intent arrived. undefined is no proof that the intent
   * failed — its first request may still be in flight — so continue it with createTransfer(request, key)
   * under the same key, never a new one. Retried like a create; a refused lookup (400 for a key the
   * header would refuse, 403, ...) is TransferRejected.
   */
  async findByIdempotencyKey(idempotencyKey: string): Promise<Transfer | undefined> {
    return this.withRetries(idempotencyKey, async () => {
      const page = await this.collection.listTransfers({ idempotencyKey },
        { signal: timeout(this.policy.attemptTimeoutMs) });
      return page.items[0];
    });
  }

  /**
   * The events after cursor (undefined: from the oldest the feed keeps), at most limit, held by the
   * service up to waitSeconds (at most 30) while there is none (GET /v1/events, group
   * transfers.read.all). A follower that processes each batch and asks again with its cursor sees every
   * transition once, each transfer's in version order, on any number of service instances; persist the
   * cursor after processing. Retried like a create; a cursor older than the feed keeps is
   * TransferRejected with status 410: start again without one and reconcile from the transfers.
   */
  async nextEvents(cursor: string | undefined, limit = 100, waitSeconds = 0): Promise<{ events: FeedEvent[]; cursor: string | undefined }> {
    const wait = Math.min(waitSeconds, 30);
    return this.withRetries('event-feed', async () => {
      const page = await this.collection.listEvents({ after: cursor, limit, prefer: wait > 0 ? `wait=${wait}` : undefined },
        { signal: timeout(wait * 1000 + this.policy.attemptTimeoutMs) });
      return { events: page.events, cursor: page.nextCursor ?? cursor };
    });
  }

  /**
   * Runs call until it answers, under the retry policy: after a network error or a retryable status it
   * waits (Retry-After, else backoff) and tries again, unless the wait would end past the budget.
   */
  private async withRetries<T>(idempotencyKey: string, call: (attempt: number) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.policy.budgetMs;
    for (let attempt = 1; ; attempt++) {
      let status: number | undefined;
      let error: string | undefined;
      let retryAfter: string | null = null;
      try {
        return await call(attempt);
      } catch (e) {
        if (e instanceof ResponseError) {
          status = e.response.status;
          if (!RETRYABLE_STATUSES.has(status)) {
            throw new TransferRejected(status, await problemOf(e.response), idempotencyKey);
          }
          retryAfter = e.response.headers.get('Retry-After');
        } else if (e instanceof FetchError) {
          error = String(e.cause ?? e);
        } else {
          throw e;
        }
      }
      const fromRetryAfter = retryAfter !== null && parseRetryAfter(retryAfter) !== null;
      const delayMs = fromRetryAfter ? parseRetryAfter(retryAfter!)! : this.backoff(attempt);
      if (Date.now() + delayMs >= deadline) {
        throw new RetryBudgetExhausted(attempt, idempotencyKey, status);
      }
      this.options.onRetry?.({ attempt, idempotencyKey, status, error, delayMs, fromRetryAfter });
      await sleep(delayMs);
    }
  }

  /**
   * Follows a transfer until it is sent or failed: each request carries the last ETag and asks the
   * service to hold it (Prefer: wait) until something changes, so an unchanged transfer costs one
   * request per waitSeconds and no body. Network errors and retryable statuses are retried within the
   * budget like createTransfer's.
   */
  async waitForFinal(id: string, opts: { waitSeconds?: number; budgetMs?: number; onChange?: (t: Transfer) => void } = {}): Promise<Transfer> {
    const waitSeconds = Math.min(opts.waitSeconds ?? 25, 30);
    const deadline = Date.now() + (opts.budgetMs ?? 120_000);
    let etag: string | undefined;
    let last: Transfer | undefined;
    let failures = 0;
    while (Date.now() < deadline) {
      try {
        const response = await this.api.getTransferRaw({ id, ifNoneMatch: etag, prefer: `wait=${waitSeconds}` },
          { signal: timeout(waitSeconds * 1000 + this.policy.attemptTimeoutMs) });
        last = await response.value();
        etag = response.raw.headers.get('ETag') ?? undefined;
        failures = 0;
        opts.onChange?.(last);
        if (FINAL.has(String(last.status))) {
          return last;
        }
        continue;
      } catch (e) {
        if (e instanceof ResponseError && e.response.status === 304) {
          failures = 0;
          continue;
        }
        if (e instanceof ResponseError && !RETRYABLE_STATUSES.has(e.response.status)) {
          throw new TransferRejected(e.response.status, await problemOf(e.response), '');
        }
        if (!(e instanceof ResponseError) && !(e instanceof FetchError)) {
          throw e;
        }
        failures++;
        const retryAfter = e instanceof ResponseError ? parseRetryAfter(e.response.headers.get('Retry-After')) : null;
        await sleep(Math.min(retryAfter ?? this.backoff(failures), Math.max(0, deadline - Date.now())));
      }
    }
    throw new Error(`transfer ${id} was not final within the budget (last status: ${last?.status ?? 'unknown'})`);
  }

  /** Full jitter: a random wait between 0 and the exponential step, so retrying clients spread out. */
  private backoff(attempt: number): number {
    const step = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(this.random() * step);
  }
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined): number | null {
  if (value == null || value.trim() === '') {
    return null;
  }
  if (/^\d+$/.test(value.trim())) {
    return Number(value.trim()) * 1000;
  }
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function timeout(ms: number): AbortSignal {
  return AbortSignal.timeout(ms);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function problemOf(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function problemTitle(problem: unknown): string {
  const p = problem as { title?: string; detail?: string } | null;
  return p?.detail ? `: ${p.detail}` : p?.title ? `: ${p.title}` : '';
}
