// Verifying a webhook delivery's Ledgerline-Signature (docs/webhooks.md): t=<unix seconds>,v1=<hex>, where the hex is
// HMAC-SHA256 of "<t>.<raw body>" under the endpoint's secret (its UTF-8 bytes, whsec_ prefix included). Web Crypto
// only, so it runs in node (>= 19) and in browsers alike.

/**
 * `true` when `header` signs `body` (the raw bytes or text as received, before any JSON parsing) under `secret`, and
 * its `t` is within `toleranceSeconds` of `nowSeconds`.
 */
export async function verifySignature(
  secret: string,
  header: string | null | undefined,
  body: string | Uint8Array,
  toleranceSeconds = 300,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<boolean> {
  if (!secret || !header) {
    return false;
  }
  let t: number | undefined;
  const v1: string[] = []; // two while a rotated secret still signs beside the new one
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) {
      continue;
    }
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === 't') {
      if (!/^\d+$/.test(value)) {
        return false;
      }
      t = Number(value);
    } else if (name === 'v1') {
      v1.push(value);
    }
  }
  if (t === undefined || v1.length === 0 || Math.abs(nowSeconds - t) > toleranceSeconds) {
    return false;
  }
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${t}.`);
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix, 0);
  signed.set(bytes, prefix.length);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
  const expected = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
  let matched = false;
  for (const candidate of v1) {
    matched = constantTimeEqual(expected, candidate) || matched;
  }
  return matched;
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) {
    return false;
  }
  let difference = 0;
  for (let i = 0; i < a.length; i++) {
    difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  }
  return difference === 0;
}
