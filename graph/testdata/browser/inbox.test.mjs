// A customer's inbox page in a real browser: the customer's backend (this test, in Node,
// with the demo API key) creates a session for subscriber A; a page served from another
// origin uses that token with urql, a GraphQL client from npm loaded from node_modules
// through an import map, to list A's messages and press a button, and is refused B's list
// (FORBIDDEN) and B's message (NOT_FOUND). The server runs in development mode, where any
// http://localhost origin may call it, so the page's origin is allowed without
// configuration. Afterwards Node checks, with the key, what really changed.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PageOrigin } from './lib/origin.mjs';
import { launch, loopback, step, waitFor } from './lib/browser.mjs';
import { Server } from './lib/server.mjs';


const server = new Server();
const origin = new PageOrigin(join(dirname(fileURLToPath(import.meta.url)), 'inbox-page'), ['@urql/core']);
const s = {
  browser: null, // Chromium and its fresh profile
  context: null,
  page: null,
  a: null, // subscriber A: the session's
  b: null, // subscriber B: someone else
  before: null, // { a, b }: their messages as the API key saw them before the page ran
  requests: [], // every URL the browser asked for
  token: null, // A's session token
  api: [], // { method, url, origin, authorization, status, headers } of every exchange with the API
  preflights: [], // { url, status, headers } of every CORS preflight, as Chromium reports them
  pageErrors: [],
};

function needsSetup() {
  if (!s.page) throw new Error('setup failed; see the first test');
}

/** backend calls the API as the customer's backend does, with the API key. */
async function backend(method, path, body) {
  const res = await fetch(`${server.baseURL}${path}`, {
    method,
    headers: { authorization: `ApiKey ${server.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { /* reported below */ }
  return { status: res.status, json, text };
}

/** messagesOf lists every message of one subscriber, newest first, with the API key. */
async function messagesOf(subscriberId) {
  const r = await backend('GET', `/v1/messages?subscriberId=${encodeURIComponent(subscriberId)}&limit=1000`);
  assert.equal(r.status, 200, `list ${subscriberId}: ${r.text.slice(0, 300)}`);
  assert.equal(r.json.hasMore, false, `${subscriberId} has more than 1000 messages`);
  return r.json.data;
}

const buttons = (m) => m.cta?.action?.buttons ?? [];
/** pressable: a message the page will press, one with a primary button not done yet. */
const pressable = (m) => m.cta?.action?.status !== 'done' && buttons(m).some((b) => b.type === 'primary');

test('setup: start the server, create A\'s session, serve the page from another origin, launch Chromium', { timeout: 600_000 }, async () => {
  await server.start();

  // The customer's backend: two subscribers with call-to-action buttons, A with one to
  // press among the 20 newest the page lists.
  const all = await backend('GET', '/v1/messages?limit=1000');
  assert.equal(all.status, 200, `list with the demo key: ${all.text.slice(0, 300)}`);
  assert.equal(all.json.hasMore, false, 'the demo data has more than 1000 messages');
  const bySubscriber = new Map();
  for (const m of all.json.data) {
    const id = m.subscriber?.subscriberId;
    if (id) bySubscriber.set(id, [...(bySubscriber.get(id) ?? []), m]);
  }
  const ids = [...bySubscriber.keys()].sort();
  s.a = ids.find((id) => bySubscriber.get(id).slice(0, 20).some(pressable));
  s.b = ids.find((id) => id !== s.a && bySubscriber.get(id).some((m) => buttons(m).length > 0));
  assert.ok(s.a && s.b, `two demo subscribers with buttons, among ${ids.join(', ')}`);
  s.before = { a: await messagesOf(s.a), b: await messagesOf(s.b) };
  const otherMessage = s.before.b.find((m) => buttons(m).length > 0);

  const session = await backend('POST', '/v1/inbox/session', { subscriberId: s.a, expiresIn: 300 });
  assert.equal(session.status, 201, `POST /v1/inbox/session: ${session.text.slice(0, 300)}`);
  assert.equal(session.json.subscriberId, s.a, 'the session is A\'s');
  assert.ok(session.json.token, 'the session has a token');
  s.token = session.json.token;

  // The page lives on http://localhost:<port2>; the API on http://127.0.0.1:<port1>.
  await origin.start('localhost');
  assert.notEqual(origin.origin, new URL(server.baseURL).origin, 'the page and the API share an origin');

  s.browser = await launch('inbox', s.requests);
  s.context = s.browser.context;
  s.context.on('response', async (res) => {
    const req = res.request();
    if (new URL(req.url()).origin !== server.baseURL) return;
    const sent = await req.allHeaders();
    s.api.push({ method: req.method(), url: req.url(), origin: sent.origin, authorization: sent.authorization, status: res.status(), headers: await res.allHeaders() });
  });

  s.page = s.context.pages()[0] ?? await s.context.newPage();
  s.page.on('pageerror', (err) => s.pageErrors.push(`uncaught: ${err.message}`));
  s.page.on('console', (msg) => { if (msg.type() === 'error') s.pageErrors.push(`console: ${msg.text()}`); });
  // Playwright's own events leave CORS preflights out; the DevTools protocol has them
  // (as OPTIONS requests of type Other).
  const cdp = await s.context.newCDPSession(s.page);
  await cdp.send('Network.enable');
  const preflights = new Map();
  cdp.on('Network.requestWillBeSent', (e) => {
    if (e.request.method === 'OPTIONS') preflights.set(e.requestId, { method: e.request.method, url: e.request.url, origin: e.request.headers.Origin ?? e.request.headers.origin });
  });
  cdp.on('Network.responseReceived', (e) => {
    const p = preflights.get(e.requestId);
    if (p) s.preflights.push({ ...p, status: e.response.status, headers: Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v])) });
  });

  const settings = new URLSearchParams({ api: server.baseURL, token: session.json.token, other: s.b, otherMessage: otherMessage._id });
  await step('inbox', () => s.page, 'open', async () => {
    const res = await s.page.goto(`${origin.origin}/#${settings}`, { waitUntil: 'load' });
    assert.equal(res.status(), 200, 'GET / of the page');
    await s.page.waitForSelector('body[data-done="true"]', { timeout: 30_000 });
  });
});

test('the page lists only A\'s messages, presses one, and is refused B\'s', { timeout: 60_000 }, async () => {
  needsSetup();
  await step('inbox', () => s.page, 'inbox', async () => {
    const inbox = await s.page.evaluate(() => window.inbox);
    assert.equal(inbox.fatal, undefined, `the page failed: ${inbox.fatal}`);

    // a. every listed message is A's, as rendered
    const rendered = await s.page.locator('#messages li').evaluateAll((lis) => lis.map((li) => ({ ...li.dataset })));
    assert.ok(rendered.length > 0, 'the page rendered A\'s messages');
    assert.ok(rendered.length <= 20, `limit 20, rendered ${rendered.length}`);
    assert.deepEqual([...new Set(rendered.map((m) => m.subscriber))], [s.a], 'subscribers of the rendered messages');
    assert.deepEqual(rendered.map((m) => m.id), s.before.a.slice(0, rendered.length).map((m) => m._id), 'A\'s newest messages, in order');
    assert.ok(rendered.some((m) => Number(m.buttons) > 0), 'some rendered message has buttons');

    // b. the pressed message is now done
    const markedID = await s.page.locator('#marked-id').textContent();
    assert.equal(await s.page.locator('#marked-status').textContent(), 'done', 'the status the mutation returned');
    const pressed = s.before.a.find((m) => m._id === markedID);
    assert.ok(pressed && pressable(pressed), `the page pressed ${markedID}, one of A's pending messages with a primary button`);

    // c. and d.
    assert.equal(await s.page.locator('#other-list-code').textContent(), 'FORBIDDEN', `B's list: ${JSON.stringify(inbox.otherList)}`);
    assert.equal(inbox.otherList.data?.messages ?? null, null, 'no data for B\'s list');
    assert.equal(await s.page.locator('#other-mark-code').textContent(), 'NOT_FOUND', `B's message: ${JSON.stringify(inbox.otherMark)}`);
    assert.equal(inbox.otherMark.data?.markMessageAction ?? null, null, 'no data for B\'s message');
  });
});

test('the page called the API across origins, with CORS', async () => {
  needsSetup();
  await step('inbox', () => s.page, 'cors', async () => {
    const api = new URL(server.baseURL).origin;
    assert.notEqual(origin.origin, api);
    // The response listener reads headers asynchronously: the last exchange may still be
    // on its way into s.api when the page is done.
    const isGraphQL = (r) => new URL(r.url).pathname === '/graphql' && r.method !== 'OPTIONS';
    await waitFor(() => s.api.filter(isGraphQL).length >= 4, 10_000, 'four recorded GraphQL exchanges');
    const graphql = s.api.filter(isGraphQL);
    assert.equal(graphql.length, 4, `four GraphQL requests (two queries, two mutations): ${JSON.stringify(graphql.map((r) => `${r.method} ${r.url}`))}`);
    // urql sends queries as GET and mutations as POST; all four with A's token, none with the key.
    for (const r of graphql) {
      assert.equal(r.authorization, `Bearer ${s.token}`, `${r.method} ${r.url} carried A's session token`);
      assert.equal(r.origin, origin.origin, `${r.method} ${r.url} carried the page's Origin`);
      assert.equal(r.headers['access-control-allow-origin'], origin.origin, `${r.method} ${r.url}: Access-Control-Allow-Origin`);
    }
    // An Authorization header is not a simple one: Chromium had to ask first, and was let.
    assert.ok(s.preflights.length > 0, 'Chromium sent no OPTIONS preflight to the API');
    for (const p of s.preflights) {
      const allowed = (p.headers['access-control-allow-headers'] ?? '').toLowerCase().split(/\s*,\s*/);
      assert.ok(new URL(p.url).pathname === '/graphql' && p.origin === origin.origin && p.status === 204 &&
        p.headers['access-control-allow-origin'] === origin.origin && allowed.includes('authorization'),
      `a granted preflight of /graphql from the page's origin: ${JSON.stringify(p)}`);
    }
  });
});

test('with the API key: A\'s pressed message is done, nothing else changed, B\'s least of all', async () => {
  needsSetup();
  const markedID = await s.page.locator('#marked-id').textContent();
  const afterA = await messagesOf(s.a);
  const afterB = await messagesOf(s.b);
  assert.deepEqual(afterB, s.before.b, 'B\'s messages');
  const pressed = afterA.find((m) => m._id === markedID);
  assert.equal(pressed?.cta?.action?.status, 'done', `A's message ${markedID}: ${JSON.stringify(pressed?.cta)}`);
  assert.equal(pressed.cta.action.result?.type, 'primary', 'the button pressed');
  assert.deepEqual(afterA.filter((m) => m._id !== markedID), s.before.a.filter((m) => m._id !== markedID), 'A\'s other messages');
});

test('the page asked nothing of any host but the two origins, and raised no error', async () => {
  needsSetup();
  const elsewhere = s.requests.filter((url) => !loopback(url));
  assert.deepEqual(elsewhere, [], 'requests to other hosts');
  const vendored = origin.requests.filter((r) => r.startsWith('GET /vendor/'));
  for (const name of ['@urql/core', 'wonka', '@0no-co/graphql.web']) {
    assert.ok(vendored.some((r) => r.startsWith(`GET /vendor/${name}/`)), `${name} came from node_modules: ${vendored.join(', ')}`);
  }
  assert.deepEqual(s.pageErrors, [], 'page errors');
});

after(async () => {
  await s.browser?.close();
  await origin.stop();
  await server.stop();
});
