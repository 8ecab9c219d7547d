// The TypeScript SDK's webhook signature check against signatures made the way the service makes them (node's own
// HMAC, and a fixed vector that WebhookSignaturesTest holds the service to): accepted within the tolerance, refused for anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { verifySignature } from '../dist/index.js';

const SECRET = 'whsec_q2V0aGlzLWlzLWEtdGVzdC1zZWNyZXQtb2YtMzItYnk';
const BODY = '{"id":"3f1c2a9e-5b7d-4c1e-9a8f-2d6b4e0c7a11.2","description":"Miete für Zoë"}';
const T = 1762161330;

function sign(secret, t, body) {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

test('accepts a signature of the body within the tolerance, as text or bytes', async () => {
  const header = sign(SECRET, T, BODY);
  assert.equal(await verifySignature(SECRET, header, BODY, 300, T), true);
  assert.equal(await verifySignature(SECRET, header, new TextEncoder().encode(BODY), 300, T + 300), true);
  assert.equal(await verifySignature(SECRET, header, BODY, 300, T - 300), true);
});

test('accepts the fixed vector the service signs in WebhookSignaturesTest', async () => {
  const header = 't=1700000000,v1=10bd7a640f04319da2ffedf4543679d0e5a3674064d3183fb0e0293a8c739cfd';
  assert.equal(await verifySignature('whsec_test', header, '{"id":"a.1"}', 300, 1700000000), true);
});

test('accepts either secret while a rotated one still signs beside the new one, and no other', async () => {
  const previous = 'whsec_cHJldmlvdXMtc2VjcmV0LW9mLXRoaXJ0eS10d28tYnl0ZXM';
  const v1 = (secret) => createHmac('sha256', secret).update(`${T}.${BODY}`).digest('hex');
  const header = `t=${T},v1=${v1(SECRET)},v1=${v1(previous)}`;
  assert.equal(await verifySignature(SECRET, header, BODY, 300, T), true);
  assert.equal(await verifySignature(previous, header, BODY, 300, T), true);
  assert.equal(await verifySignature('whsec_other', header, BODY, 300, T), false);
});

test('refuses an old or future t, another secret, body or t, and malformed headers', async () => {
  const header = sign(SECRET, T, BODY);
  assert.equal(await verifySignature(SECRET, header, BODY, 300, T + 301), false);
  assert.equal(await verifySignature(SECRET, header, BODY, 300, T - 301), false);
  assert.equal(await verifySignature('whsec_other', header, BODY, 300, T), false);
  assert.equal(await verifySignature(SECRET, header, `${BODY} `, 300, T), false);
  assert.equal(await verifySignature(SECRET, header.replace(`t=${T}`, `t=${T + 1}`), BODY, 300, T), false);
  assert.equal(await verifySignature(SECRET, `t=${T}`, BODY, 300, T), false);
  assert.equal(await verifySignature(SECRET, header.slice(header.indexOf('v1=')), BODY, 300, T), false);
  assert.equal(await verifySignature(SECRET, 't=abc,v1=00', BODY, 300, T), false);
  assert.equal(await verifySignature(SECRET, '', BODY, 300, T), false);
  assert.equal(await verifySignature(SECRET, undefined, BODY, 300, T), false);
});
