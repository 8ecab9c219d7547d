// The page's whole flow, through the TypeScript SDK (served from dist/ under /sdk/): a dev token, one
// transfer intent (retried under the same key when an attempt fails), then a long poll to its final status.
import { LedgerlineClient, newIdempotencyKey } from '/sdk/index.js';

const params = new URLSearchParams(location.search);
const api = params.get('api');
const $ = (id) => document.getElementById(id);

async function devToken(subject) {
  // /dev/tokens exists in dev and test builds only and is not part of the contract, so not of the SDK
  const response = await fetch(`${api}/dev/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ subject, groups: ['transfers.write', 'transfers.read'] }),
  });
  if (!response.ok) {
    throw new Error(`dev token: ${response.status}`);
  }
  return (await response.json()).token;
}

async function run() {
  $('origin').textContent = location.origin;
  $('api').textContent = api;
  const client = new LedgerlineClient({
    baseUrl: api,
    token: await devToken(params.get('subject') ?? 'browser'),
    policy: { budgetMs: 20_000, attemptTimeoutMs: 10_000 },
    onRetry: (e) => {
      const item = document.createElement('li');
      item.textContent = `attempt ${e.attempt} failed (${e.status ?? e.error}); retrying in ${e.delayMs} ms with the same key`;
      $('retries').append(item);
    },
  });

  const key = newIdempotencyKey();
  $('key').textContent = key;
  const created = await client.createTransfer({
    amount: 1250,
    currency: 'EUR',
    destination: { iban: 'DE89370400440532013000', name: 'Ada Lovelace' },
    description: 'Sent from the browser',
  }, key);
  $('transfer-id').textContent = created.transfer.id;
  $('attempts').textContent = String(created.attempts);
  $('replayed').textContent = String(created.replayed);
  $('status').textContent = created.transfer.status;

  const final = await client.waitForFinal(created.transfer.id, {
    waitSeconds: 10,
    budgetMs: 30_000,
    onChange: (t) => { $('status').textContent = t.status; },
  });
  $('status').textContent = final.status;
  $('status').className = final.status;
  document.body.dataset.done = 'true';
}

run().catch((e) => {
  $('error').textContent = String(e);
  document.body.dataset.done = 'error';
});
