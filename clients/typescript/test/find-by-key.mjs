// A lost response, found again through the TypeScript SDK against a running service (no browser): the first POST
// reaches the service but its answer is dropped and the budget allows no retry; findByIdempotencyKey finds the
// transfer, another principal finds nothing under the same key, a key the header would refuse is rejected, and
// continuing the intent under its key replays it. Prints what it saw as JSON on stdout, for
// clients.TypeScriptSdkTest to assert (through NodeScript). Usage: node test/find-by-key.mjs --api http://localhost:8081 --subject ts-sdk
import { LedgerlineClient, RetryBudgetExhausted, TransferRejected } from '../dist/index.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []));
const api = (args.api ?? 'http://localhost:8080').replace(/\/$/, '');
const subject = args.subject ?? 'ts-sdk';

async function token(sub) {
  const response = await fetch(`${api}/dev/tokens`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ subject: sub, groups: ['transfers.write', 'transfers.read'] }),
  });
  return (await response.json()).token;
}

/** A fetch whose first POST reaches the service and then loses its answer, as a dropped connection would. */
function losingFirstPost() {
  let lost = null;
  const fetchApi = async (url, init) => {
    const response = await fetch(url, init);
    if (lost === null && init?.method === 'POST') {
      lost = response.status;
      throw new TypeError('Failed to fetch (answer dropped after the service answered)');
    }
    return response;
  };
  return { fetchApi, lostStatus: () => lost };
}

const request = { amount: 2100, currency: 'EUR', destination: { iban: 'DE89370400440532013000', name: 'Ada Lovelace' }, description: 'TS SDK' };
const key = `sdk:ts/lost-${crypto.randomUUID()}`;
const owner = await token(subject);
const front = losingFirstPost();
const impatient = new LedgerlineClient({ baseUrl: api, token: owner, fetchApi: front.fetchApi, policy: { budgetMs: 1 } });
const client = new LedgerlineClient({ baseUrl: api, token: owner });
const other = new LedgerlineClient({ baseUrl: api, token: await token(`${subject}-other`) });

const out = { key };
try {
  await impatient.createTransfer(request, key);
  out.gaveUp = false;
} catch (e) {
  out.gaveUp = e instanceof RetryBudgetExhausted && e.idempotencyKey === key;
}
out.lostStatus = front.lostStatus();
const found = await client.findByIdempotencyKey(key);
out.found = found ? { id: found.id, amount: found.amount } : null;
out.otherFound = (await other.findByIdempotencyKey(key)) ?? null;
out.unknownFound = (await client.findByIdempotencyKey(`sdk:ts/never-${crypto.randomUUID()}`)) ?? null;
try {
  await client.findByIdempotencyKey('two words');
  out.invalidStatus = 200;
} catch (e) {
  out.invalidStatus = e instanceof TransferRejected ? e.status : String(e);
}
const continued = await client.createTransfer(request, key);
out.continued = { id: continued.transfer.id, replayed: continued.replayed };
console.log(JSON.stringify(out));
