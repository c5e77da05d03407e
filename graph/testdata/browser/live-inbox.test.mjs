// The development live inbox (/inbox) in a real browser, in two tabs of the same
// subscriber: both list the subscriber's newest messages; a message that another process
// (`server import`, writing the same SQLite file) adds after the pages loaded appears in
// both without a reload; pressing its primary button in one tab shows it done in both,
// the second tab learning it from the messageEvents subscription alone. The page gets a
// session token from the development helper and never holds the API key.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';

import { launch, loopback, step, waitFor } from './lib/browser.mjs';
import { Server } from './lib/server.mjs';

const subscriber = 'user-1-00000'; // the page's default
const server = new Server();
const s = {
  browser: null,
  tabs: [], // two pages: /inbox and /inbox?subscriberId=<subscriber>
  current: null, // the page a failed step screenshots
  requests: [], // every URL the browser asked for
  exchanges: [], // { method, path, authorization, status } of every request to the server
  sessions: [], // the bodies POST /inbox/session answered
  sockets: [], // { url, sent: [frame payloads] } of every WebSocket
  navigations: 0, // main-frame navigations after the first load of each tab
  pageErrors: [],
  imported: null, // the message imported while the pages were open
};

const rows = (page) => page.locator('[data-testid="message"]').evaluateAll((lis) => lis.map((li) => ({ id: li.dataset.id, status: li.dataset.status })));
const row = (page, id) => `[data-testid="message"][data-id="${id}"]`;

function needsSetup() {
  if (s.tabs.length !== 2) throw new Error('setup failed; see the first test');
}

/** api calls the server as a backend does, with the demo API key. */
async function api(path) {
  const res = await fetch(`${server.baseURL}${path}`, { headers: { authorization: `ApiKey ${server.apiKey}` } });
  const text = await res.text();
  assert.equal(res.status, 200, `GET ${path}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** newID is a fresh message id: 24 hex digits, the first 8 the time in seconds. */
const newID = () => Math.floor(Date.now() / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex');

test('setup: start the server with the demo, open /inbox in two tabs', { timeout: 600_000 }, async () => {
  await server.start();
  s.browser = await launch('live-inbox', s.requests);
  const { context } = s.browser;
  context.on('response', async (res) => {
    const req = res.request();
    const url = new URL(req.url());
    if (url.origin !== server.baseURL) return;
    const sent = await req.allHeaders();
    s.exchanges.push({ method: req.method(), path: url.pathname, authorization: sent.authorization, status: res.status() });
    if (url.pathname === '/inbox/session') s.sessions.push(await res.json().catch(() => null));
  });

  const urls = [`${server.baseURL}/inbox`, `${server.baseURL}/inbox?subscriberId=${subscriber}`];
  for (const [i, url] of urls.entries()) {
    const page = i === 0 ? (context.pages()[0] ?? await context.newPage()) : await context.newPage();
    s.current = page;
    page.on('pageerror', (err) => s.pageErrors.push(`tab ${i + 1} uncaught: ${err.message}`));
    page.on('console', (msg) => { if (msg.type() === 'error') s.pageErrors.push(`tab ${i + 1} console: ${msg.text()}`); });
    page.on('websocket', (ws) => {
      const socket = { url: ws.url(), sent: [] };
      s.sockets.push(socket);
      ws.on('framesent', (f) => socket.sent.push(String(f.payload)));
    });
    await step('live-inbox', () => page, `open tab ${i + 1}`, async () => {
      const res = await page.goto(url, { waitUntil: 'load' });
      assert.equal(res.status(), 200, `GET ${url}`);
      assert.match(res.headers()['content-type'], /^text\/html/);
      await page.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 30_000 });
      await page.waitForSelector('[data-testid="messages"][data-loaded="true"]', { timeout: 30_000 });
    });
    // From here on, a navigation would be a reload the test did not ask for; so would a
    // lost window property.
    page.on('framenavigated', (frame) => { if (frame === page.mainFrame()) s.navigations++; });
    await page.evaluate(() => { window.sameDocument = true; });
    s.tabs.push(page);
  }
});

test('both tabs list the subscriber\'s newest messages and are live', { timeout: 60_000 }, async () => {
  needsSetup();
  const newest = (await api(`/v1/messages?subscriberId=${subscriber}&limit=20`)).data;
  assert.ok(newest.length > 0, 'the demo subscriber has messages');
  for (const [i, page] of s.tabs.entries()) {
    s.current = page;
    await step('live-inbox', () => page, `list in tab ${i + 1}`, async () => {
      assert.equal(await page.locator('[data-testid="subscriber"]').inputValue(), subscriber, 'the picker shows the subscriber');
      assert.equal(await page.locator('[data-testid="connection"]').textContent(), 'Live');
      assert.deepEqual((await rows(page)).map((r) => r.id), newest.map((m) => m._id), 'the 20 newest, newest first');
      const pending = newest.find((m) => m.cta?.action?.status === 'pending' && m.cta.action.buttons?.length > 0);
      if (pending) {
        assert.equal(await page.locator(`${row(page, pending._id)} [data-testid="status"]`).textContent(), 'pending');
        assert.equal(await page.locator(`${row(page, pending._id)} button`).count(), pending.cta.action.buttons.length, 'its buttons');
      }
      assert.equal(await page.locator('[data-testid="error"]').isHidden(), true, 'no error shown');
    });
  }
});

test('a message another process imports appears at the top of both tabs without a reload', { timeout: 60_000 }, async () => {
  needsSetup();
  // The subscriber's newest message as a template: its subscriber and template records
  // come with it, as import wants them.
  const [model] = (await api(`/v1/messages?subscriberId=${subscriber}&limit=1`)).data;
  const createdAt = new Date().toISOString();
  const message = {
    ...model, _id: newID(), _notificationId: newID(), transactionId: randomUUID(), createdAt, deliveredAt: [createdAt],
    channel: 'in_app', subject: `Imported while you watched ${randomBytes(3).toString('hex')}`,
    content: [{ type: 'text', content: 'This message was written by another process after the page loaded.' }],
    read: false, seen: false,
    cta: { type: 'redirect', data: { url: 'https://app.example.com/live' }, action: { status: 'pending', buttons: [
      { type: 'primary', content: 'Accept', resultContent: 'Accepted' },
      { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
    ] } },
  };
  delete message.lastSeenDate;
  delete message.lastReadDate;
  delete message.title;
  await server.import([message]);
  s.imported = message;

  for (const [i, page] of s.tabs.entries()) {
    s.current = page;
    await step('live-inbox', () => page, `imported in tab ${i + 1}`, async () => {
      await page.waitForSelector(row(page, message._id), { timeout: 15_000 });
      const listed = await rows(page);
      assert.equal(listed[0].id, message._id, 'the new message is at the top');
      assert.equal(listed[0].status, 'pending');
      assert.equal(await page.locator(`${row(page, message._id)} h2`).textContent(), message.subject);
      assert.deepEqual(await page.locator(`${row(page, message._id)} button`).allTextContents(), ['Accept', 'Decline']);
      assert.equal(await page.evaluate(() => window.sameDocument), true, 'the page was not reloaded');
    });
  }
  assert.equal(s.navigations, 0, 'no tab navigated');
});

test('pressing Accept in one tab shows done in both', { timeout: 60_000 }, async () => {
  needsSetup();
  assert.ok(s.imported, 'the import step failed');
  const id = s.imported._id;
  const [first, second] = s.tabs;
  s.current = first;
  await step('live-inbox', () => first, 'press', async () => {
    await first.locator(`${row(first, id)} [data-testid="action-primary"]`).click({ timeout: 10_000 });
  });
  for (const [i, page] of s.tabs.entries()) {
    s.current = page;
    await step('live-inbox', () => page, `done in tab ${i + 1}`, async () => {
      await page.waitForSelector(`${row(page, id)}[data-status="done"]`, { timeout: 15_000 });
      assert.equal(await page.locator(`${row(page, id)} [data-testid="status"]`).textContent(), 'done');
      assert.equal(await page.locator(`${row(page, id)} button`).count(), 0, 'no buttons once done');
      assert.equal(await page.evaluate(() => window.sameDocument), true, 'the page was not reloaded');
    });
  }
  // The second tab sent nothing but its first list and session: the change came to it
  // over its WebSocket.
  assert.equal(s.exchanges.filter((e) => e.method === 'POST' && e.path === '/graphql').length, 3,
    `two lists and one mark: ${JSON.stringify(s.exchanges.map((e) => `${e.method} ${e.path}`))}`);
  assert.equal(s.navigations, 0, 'no tab navigated');
  assert.equal(second.isClosed(), false);
});

test('with the API key: the imported message is done, pressed with primary', async () => {
  needsSetup();
  assert.ok(s.imported, 'the import step failed');
  const { data } = await api(`/v1/messages?subscriberId=${subscriber}&limit=1`);
  assert.equal(data[0]._id, s.imported._id);
  assert.equal(data[0].cta.action.status, 'done');
  assert.equal(data[0].cta.action.result?.type, 'primary');
});

test('the page used session tokens only, asked nothing of other hosts, and raised no error', async () => {
  needsSetup();
  await waitFor(() => s.exchanges.filter((e) => e.path === '/graphql').length >= 3, 10_000, 'three recorded GraphQL exchanges');
  const tokens = s.sessions.map((b) => b?.token);
  assert.equal(tokens.length, 2, `one session per tab: ${JSON.stringify(s.sessions)}`);
  for (const b of s.sessions) assert.equal(b.subscriberId, subscriber);
  for (const e of s.exchanges.filter((x) => x.path === '/graphql')) {
    assert.ok(tokens.map((t) => `Bearer ${t}`).includes(e.authorization), `${e.method} ${e.path} carried a session token`);
    assert.equal(e.status, 200, `${e.method} ${e.path}`);
  }
  assert.deepEqual(s.exchanges.filter((e) => /apikey/i.test(e.authorization ?? '')), [], 'requests with the API key');

  assert.equal(s.sockets.length, 2, `one WebSocket per tab: ${s.sockets.map((w) => w.url)}`);
  for (const w of s.sockets) {
    assert.equal(w.url, `${server.baseURL.replace('http', 'ws')}/graphql`);
    const init = w.sent.map((f) => JSON.parse(f)).find((m) => m.type === 'connection_init');
    assert.ok(tokens.map((t) => `Bearer ${t}`).includes(init?.payload?.Authorization), `connection_init carries a session token: ${JSON.stringify(init)}`);
    assert.ok(w.sent.some((f) => f.includes('messageEvents')), 'the socket subscribed to messageEvents');
  }

  assert.deepEqual(s.requests.filter((url) => !loopback(url)), [], 'requests to other hosts');
  assert.deepEqual(s.pageErrors, [], 'page errors');
});

after(async () => {
  await s.browser?.close();
  await server.stop();
});
