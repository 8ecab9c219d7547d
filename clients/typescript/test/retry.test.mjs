// The TypeScript retry layer's policy, against a scripted fetch (no network): which answers are retried,
// under which key, after how long, and when it gives up. Run with `npm test` after `npm run build`; the
// Maven build runs it after compiling the SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerlineClient, RetryBudgetExhausted, TransferRejected, parseRetryAfter } from '../dist/index.js';

const TRANSFER = {
  id: '3f1c2a9e-5b7d-4c1e-9a8f-2d6b4e0c7a11', status: 'pending', amount: 1250, currency: 'EUR',
  destination: { iban: 'DE89370400440532013000', name: 'Ada Lovelace' }, description: null, version: 0,
  providerReference: 'll_x', failureReason: null, createdAt: '2026-11-30T00:00:00Z', updatedAt: '2026-11-30T00:00:00Z',
};
const REQUEST = { amount: 1250, currency: 'EUR', destination: { iban: 'DE89370400440532013000', name: 'Ada Lovelace' } };

/** A fetch that plays one scripted answer per call and records what it was sent, and when. */
function scripted(...answers) {
  const calls = [];
  const fetchApi = async (url, init) => {
    calls.push({ url: String(url), at: Date.now(), key: new Headers(init.headers).get('Idempotency-Key') });
    const next = answers.shift() ?? { status: 201 };
    if (next === 'network') {
      throw new TypeError('Failed to fetch');
    }
    const headers = { 'Content-Type': next.status < 300 ? 'application/json' : 'application/problem+json', ...next.headers };
    const body = next.status < 300 ? JSON.stringify(TRANSFER) : JSON.stringify({ type: 'https://ledgerline.dev/problems/x', status: next.status });
    return new Response(body, { status: next.status, headers });
  };
  return { calls, fetchApi };
}

function client(fetchApi, policy = {}, events = []) {
  return new LedgerlineClient({ baseUrl: 'http://api.test', token: 't', fetchApi, policy, onRetry: (e) => events.push(e), random: () => 0.5 });
}

test('reuses one key through a network error, 409, 429 and 503 and surfaces the replay', async () => {
  const { calls, fetchApi } = scripted('network', { status: 409, headers: { 'Retry-After': '0' } }, { status: 429, headers: { 'Retry-After': '0' } },
    { status: 503, headers: { 'Retry-After': '0' } }, { status: 201, headers: { 'Idempotent-Replayed': 'true', Location: '/v1/transfers/x' } });
  const events = [];
  const created = await client(fetchApi, { baseDelayMs: 1 }, events).createTransfer(REQUEST);
  assert.equal(calls.length, 5);
  assert.equal(new Set(calls.map((c) => c.key)).size, 1);
  assert.equal(calls[0].key, created.idempotencyKey);
  assert.equal(created.replayed, true);
  assert.equal(created.attempts, 5);
  assert.deepEqual(events.map((e) => e.status ?? 'network'), ['network', 409, 429, 503]);
});

for (const status of [400, 401, 403, 422]) {
  test(`never retries ${status}`, async () => {
    const { calls, fetchApi } = scripted({ status });
    await assert.rejects(client(fetchApi).createTransfer(REQUEST), (e) => e instanceof TransferRejected && e.status === status);
    assert.equal(calls.length, 1);
  });
}

test('waits as long as Retry-After asks', async () => {
  const { calls, fetchApi } = scripted({ status: 503, headers: { 'Retry-After': '1' } });
  const events = [];
  await client(fetchApi, {}, events).createTransfer(REQUEST);
  assert.equal(events[0].delayMs, 1000);
  assert.equal(events[0].fromRetryAfter, true);
  assert.ok(calls[1].at - calls[0].at >= 990, `waited ${calls[1].at - calls[0].at} ms`);
});

test('without Retry-After backs off exponentially with jitter', async () => {
  const { fetchApi } = scripted('network', 'network', 'network');
  const events = [];
  await client(fetchApi, { baseDelayMs: 10, maxDelayMs: 25 }, events).createTransfer(REQUEST);
  // random() = 0.5: half of 10, 20, then the 25 ms cap
  assert.deepEqual(events.map((e) => e.delayMs), [5, 10, 13]);
  assert.ok(events.every((e) => !e.fromRetryAfter));
});

test('gives up, with the key, rather than wait past the budget', async () => {
  const { calls, fetchApi } = scripted({ status: 503, headers: { 'Retry-After': '5' } });
  await assert.rejects(client(fetchApi, { budgetMs: 1000 }).createTransfer(REQUEST, 'intent-7'),
    (e) => e instanceof RetryBudgetExhausted && e.idempotencyKey === 'intent-7' && e.attempts === 1 && e.lastStatus === 503);
  assert.equal(calls.length, 1);
});

test('polls with the last ETag until the transfer is final', async () => {
  const seen = [];
  const answers = [{ status: 200, etag: '"1"', transferStatus: 'processing' }, { status: 304 }, { status: 200, etag: '"2"', transferStatus: 'sent' }];
  const fetchApi = async (url, init) => {
    const headers = new Headers(init.headers);
    seen.push({ ifNoneMatch: headers.get('If-None-Match'), prefer: headers.get('Prefer') });
    const next = answers.shift();
    if (next.status === 304) {
      return new Response(null, { status: 304 });
    }
    return new Response(JSON.stringify({ ...TRANSFER, status: next.transferStatus }), { status: 200, headers: { 'Content-Type': 'application/json', ETag: next.etag } });
  };
  const final = await client(fetchApi).waitForFinal(TRANSFER.id, { waitSeconds: 5 });
  assert.equal(final.status, 'sent');
  assert.deepEqual(seen, [{ ifNoneMatch: null, prefer: 'wait=5' }, { ifNoneMatch: '"1"', prefer: 'wait=5' }, { ifNoneMatch: '"1"', prefer: 'wait=5' }]);
});

test('reads Retry-After as seconds or as an HTTP date', () => {
  assert.equal(parseRetryAfter('3'), 3000);
  assert.equal(parseRetryAfter(null), null);
  assert.equal(parseRetryAfter('soon'), null);
  const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
  assert.ok(parseRetryAfter(inTwoSeconds) > 0 && parseRetryAfter(inTwoSeconds) <= 2000);
});

test('finds a transfer by its key, percent-encoded, retrying a 503 like a create', async () => {
  const pages = [{ status: 503, headers: { 'Retry-After': '0' } }, { items: [TRANSFER] }, { items: [] }];
  const urls = [];
  const fetchApi = async (url) => {
    urls.push(String(url));
    const next = pages.shift();
    if (next.status) {
      return new Response('{"status": 503}', { status: 503, headers: { 'Content-Type': 'application/problem+json', ...next.headers } });
    }
    return new Response(JSON.stringify({ items: next.items, nextCursor: null }), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  const events = [];
  const sdk = client(fetchApi, {}, events);
  assert.equal((await sdk.findByIdempotencyKey('order:42/retry')).id, TRANSFER.id);
  assert.equal(await sdk.findByIdempotencyKey('order:43'), undefined);
  assert.equal(urls[0], 'http://api.test/v1/transfers?idempotencyKey=order%3A42%2Fretry');
  assert.deepEqual(events.map((e) => [e.status, e.idempotencyKey]), [[503, 'order:42/retry']]);
});
