// The event feed followed through the TypeScript SDK against a running service (no browser): the follower reads to
// the feed's end, two transfers are created, and the follower goes on with held requests (Prefer: wait) through a
// fetch that drops the first answer of the feed after the service gave it. Prints each transfer's versions as seen,
// and the status of an expired cursor, as JSON on stdout for clients.TypeScriptSdkTest (through NodeScript).
// Usage: node test/follow-feed.mjs --api http://localhost:8081 --subject ts-feed
import { LedgerlineClient, TransferRejected } from '../dist/index.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []));
const api = (args.api ?? 'http://localhost:8080').replace(/\/$/, '');
const subject = args.subject ?? 'ts-feed';

async function token(sub, groups) {
  const response = await fetch(`${api}/dev/tokens`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ subject: sub, groups }),
  });
  return (await response.json()).token;
}

let dropped = 0;
const droppingFirstFeedAnswer = async (url, init) => {
  const response = await fetch(url, init);
  if (dropped === 0 && String(url).includes('/v1/events') && String(url).includes('after=')) {
    dropped = response.status;
    throw new TypeError('Failed to fetch (answer dropped after the service answered)');
  }
  return response;
};

const writer = new LedgerlineClient({ baseUrl: api, token: await token(subject, ['transfers.write', 'transfers.read']) });
const ops = await token(`${subject}-ops`, ['transfers.read.all']);
const follower = new LedgerlineClient({ baseUrl: api, token: ops, fetchApi: droppingFirstFeedAnswer });

let cursor;
for (;;) {
  const batch = await new LedgerlineClient({ baseUrl: api, token: ops }).nextEvents(cursor, 1000, 0);
  if (batch.events.length === 0) break;
  cursor = batch.cursor;
}
const request = { amount: 2200, currency: 'EUR', destination: { iban: 'DE89370400440532013000', name: 'Ada Lovelace' }, description: 'TS feed' };
const ids = [(await writer.createTransfer(request)).transfer.id, (await writer.createTransfer(request)).transfer.id];
const seen = Object.fromEntries(ids.map((id) => [id, []]));
const until = Date.now() + 30_000;
while (Date.now() < until && !ids.every((id) => seen[id].length === 3)) {
  const batch = await follower.nextEvents(cursor, 2, 1);
  cursor = batch.cursor;
  for (const e of batch.events) {
    if (e.transferId in seen) seen[e.transferId].push(e.version);
  }
}
const out = { ids, seen, dropped };
const old = Buffer.from(`1.1.${crypto.randomUUID()}.0.${Date.now() - 31 * 86_400_000}`).toString('base64url');
try {
  await follower.nextEvents(old, 10, 0);
  out.expiredStatus = 200;
} catch (e) {
  out.expiredStatus = e instanceof TransferRejected ? e.status : String(e);
}
console.log(JSON.stringify(out));
