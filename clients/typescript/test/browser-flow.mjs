#!/usr/bin/env node
// Drives test/browser/index.html in headless Chromium (Debian's `chromium`, through playwright-core) against a
// running Ledgerline API, and prints what happened as one JSON document on stdout. BrowserFlowTest runs it and
// asserts on that document and on PostgreSQL; by hand:
//
//   node test/browser-flow.mjs --api http://localhost:8080 --screenshot /tmp/flow.png
//
// Three local servers take part: the page's own origin (the page and the SDK's dist/ under /sdk/), and in front
// of the API a pass-through proxy on a second origin that records every exchange as the browser received it
// (preflights included) and drops the connection of the first POST /v1/transfers after the API has answered it,
// so the first attempt reaches the service but its answer never reaches the page.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []));
const api = new URL(args.api ?? 'http://localhost:8080');
const screenshot = path.resolve(args.screenshot ?? 'target/browser-flow.png');
const subject = args.subject ?? 'browser-flow';
const executablePath = args.chromium ?? process.env.CHROMIUM ?? '/usr/bin/chromium';
const log = (...m) => console.error('browser-flow:', ...m);

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.map': 'application/json' };

function serveStatic(req, res) {
  const url = new URL(req.url, 'http://page');
  const file = url.pathname.startsWith('/sdk/')
    ? path.join(here, '..', 'dist', url.pathname.slice('/sdk/'.length))
    : path.join(here, 'browser', url.pathname === '/' ? 'index.html' : url.pathname.slice(1));
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(data);
  });
}

const exchanges = [];
let droppedOne = false;

function proxy(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const headers = { ...req.headers, host: api.host };
    delete headers.connection;
    const upstream = http.request({ hostname: api.hostname, port: api.port, path: req.url, method: req.method, headers }, (answer) => {
      const body = [];
      answer.on('data', (c) => body.push(c));
      answer.on('end', () => {
        const record = {
          method: req.method,
          path: req.url,
          origin: req.headers.origin ?? null,
          idempotencyKey: req.headers['idempotency-key'] ?? null,
          requestedHeaders: req.headers['access-control-request-headers'] ?? null,
          status: answer.statusCode,
          headers: answer.headers,
          dropped: false,
        };
        exchanges.push(record);
        if (!droppedOne && req.method === 'POST' && req.url === '/v1/transfers') {
          droppedOne = true;
          record.dropped = true;
          req.socket.destroy();
          return;
        }
        const bytes = Buffer.concat(body);
        const out = { ...answer.headers, connection: 'close', 'content-length': String(bytes.length) };
        delete out['transfer-encoding'];
        res.writeHead(answer.statusCode, out).end(bytes);
      });
    });
    upstream.on('error', (e) => {
      exchanges.push({ method: req.method, path: req.url, error: String(e) });
      req.socket.destroy();
    });
    upstream.end(Buffer.concat(chunks));
  });
}

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const pageServer = await listen(serveStatic);
const proxyServer = await listen(proxy);
const pageOrigin = `http://127.0.0.1:${pageServer.address().port}`;
const apiOrigin = `http://127.0.0.1:${proxyServer.address().port}`;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerline-chromium-'));
const result = { pageOrigin, apiOrigin, exchanges, browser: { responses: [], failures: [], console: [] } };
let context;
try {
  // playwright-core drives the machine's own chromium; it downloads no browser. Its persistent context gives
  // the fresh --user-data-dir; headless is Playwright's own --headless.
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1000, height: 720 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  const pending = [];
  page.on('response', (r) => {
    if (r.url().startsWith(apiOrigin)) {
      pending.push(r.allHeaders().then((headers) => result.browser.responses.push(
        { method: r.request().method(), url: r.url().slice(apiOrigin.length), status: r.status(), headers })));
    }
  });
  page.on('requestfailed', (r) => result.browser.failures.push(
    { method: r.method(), url: r.url().replace(apiOrigin, ''), error: r.failure()?.errorText ?? null }));
  page.on('console', (m) => result.browser.console.push(`${m.type()}: ${m.text()}`));

  await page.goto(`${pageOrigin}/?api=${encodeURIComponent(apiOrigin)}&subject=${encodeURIComponent(subject)}`);
  await page.waitForSelector('body[data-done]', { timeout: 90_000 });
  await Promise.all(pending);
  result.dom = await page.evaluate(() => ({
    done: document.body.dataset.done,
    ...Object.fromEntries(['origin', 'api', 'key', 'transfer-id', 'attempts', 'replayed', 'status', 'error']
      .map((id) => [id, document.getElementById(id).textContent])),
    statusClass: document.getElementById('status').className,
    retries: [...document.querySelectorAll('#retries li')].map((li) => li.textContent),
  }));
  fs.mkdirSync(path.dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  result.screenshot = screenshot;
} catch (e) {
  result.error = String(e?.stack ?? e);
  log(result.error);
} finally {
  await context?.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
  pageServer.close();
  proxyServer.close();
}
process.stdout.write(JSON.stringify(result) + '\n');
process.exitCode = result.dom?.done === 'true' ? 0 : 1;
