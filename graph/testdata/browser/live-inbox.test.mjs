// The development live inbox (/inbox) in a real browser, in two tabs of the same
// subscriber: both list the subscriber's newest in-app messages and the unread badge;
// messages that another process (`server import`, writing the same SQLite file) adds
// after the pages loaded appear in both, in their place by date, with relative times, and
// raise both badges; a mark made with the API key, a message opened in one tab and a
// button pressed in one tab show in both, the second tab learning each from its
// subscriptions alone. The page gets a session token from the development helper and
// never holds the API key.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';

import { launch, loopback, step } from './lib/browser.mjs';
import { badge, counts, inAppPage, keyGraphQL, message, newID, row, rows, tabFilters } from './lib/inbox.mjs';
import { Server } from './lib/server.mjs';

const subscriber = 'user-1-00000'; // the page's default
const server = new Server();
const s = {
  browser: null,
  tabs: [], // two pages: /inbox and /inbox?subscriberId=<subscriber>
  current: null, // the page a failed step screenshots
  requests: [], // every URL the browser asked for
  exchanges: [], // { tab, method, path, authorization, status, operation, variables } of every request to the server
  sessions: [], // the bodies POST /inbox/session answered
  sockets: [], // { url, sent: [frame payloads] } of every WebSocket
  navigations: 0, // main-frame navigations after the first load of each tab
  pageErrors: [],
  imported: [], // the messages imported while the pages were open, newest first
};

/** operation is the name of a GraphQL document's operation. */
const operation = (query) => /^\s*(?:query|mutation|subscription)\s+(\w+)/.exec(query ?? '')?.[1] ?? null;

/** writes are the GraphQL mutations a tab sent, other than marking messages seen as it shows them. */
const writes = (tab) => s.exchanges.filter((e) => e.tab === tab && e.path === '/graphql' &&
  !['Inbox'].includes(e.operation) && !(e.operation === 'Mark' && Object.keys(e.variables).join() === 's,ids,seen'));

function needsSetup() {
  if (s.tabs.length !== 2) throw new Error('setup failed; see the first test');
}

/** inEveryTab runs check for each tab as a step of its own, screenshotting a failure. */
async function inEveryTab(name, check) {
  for (const [i, page] of s.tabs.entries()) {
    s.current = page;
    await step('live-inbox', () => page, `${name} in tab ${i + 1}`, () => check(page, i));
  }
}

/** badgeIs waits until the page's badge shows n. */
const badgeIs = (page, n) => page.waitForSelector(`[data-testid="badge"][data-count="${n}"]`, { timeout: 15_000 });

test('setup: start the server with the demo, open /inbox in two tabs', { timeout: 600_000 }, async () => {
  await server.start();
  s.browser = await launch('live-inbox', s.requests);
  const { context } = s.browser;

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
    page.on('response', async (res) => {
      const req = res.request();
      const u = new URL(req.url());
      if (u.origin !== server.baseURL) return;
      const sent = await req.allHeaders();
      const body = u.pathname === '/graphql' ? req.postDataJSON() : null;
      s.exchanges.push({ tab: i + 1, method: req.method(), path: u.pathname, authorization: sent.authorization, status: res.status(),
        operation: operation(body?.query), variables: body?.variables ?? {} });
      if (u.pathname === '/inbox/session') s.sessions.push(await res.json().catch(() => null));
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

test('both tabs list only the subscriber\'s newest in-app messages, and are live', { timeout: 60_000 }, async () => {
  needsSetup();
  const { ids: newest, messages } = await inAppPage(server, subscriber, tabFilters.all);
  const c = await counts(server, subscriber);
  assert.ok(c.allChannels > c.total, `the demo subscriber has messages in other channels too: ${JSON.stringify(c)}`);
  assert.equal(newest.length, 20, 'the demo subscriber has more than a page of in-app messages');
  await inEveryTab('list', async (page) => {
    assert.equal(await page.locator('[data-testid="subscriber"]').inputValue(), subscriber, 'the picker shows the subscriber');
    assert.equal(await page.locator('[data-testid="connection"]').textContent(), 'Live');
    const listed = await rows(page);
    assert.deepEqual(listed.map((r) => r.id), newest, 'the 20 newest in-app messages, newest first');
    assert.deepEqual([...new Set(listed.map((r) => r.channel))], ['in_app'], 'in-app only');
    assert.deepEqual(listed.map((r) => r.read), messages.map((m) => String(m.read)), 'each read or unread as stored');
    const pending = messages.find((m) => m.cta?.action?.status === 'pending' && m.cta.action.buttons?.length > 0);
    assert.ok(pending, 'a message with buttons to press');
    assert.deepEqual(await page.locator(`${row(pending._id)} .buttons button`).allTextContents(), pending.cta.action.buttons.map((b) => b.content), 'its buttons');
    assert.equal(await page.locator('[data-testid="error"]').isHidden(), true, 'no error shown');
  });
});

test('the badge shows the unread count, with a label', { timeout: 60_000 }, async () => {
  needsSetup();
  const { unread } = await counts(server, subscriber);
  assert.ok(unread > 0, 'the demo subscriber has unread messages');
  await inEveryTab('badge', async (page) => {
    await badgeIs(page, unread);
    assert.deepEqual(await badge(page), { text: String(unread), label: `${unread} unread messages` });
    assert.equal(await page.locator('[data-testid="badge"]').getAttribute('role'), 'status');
  });
});

test('messages another process imports appear in their place in both tabs, with relative times, and raise the badge', { timeout: 60_000 }, async () => {
  needsSetup();
  const before = await counts(server, subscriber);
  // The subscriber's newest message as a template: its subscriber and template records
  // come with it, as import wants them.
  const res = await fetch(`${server.baseURL}/v1/messages?subscriberId=${subscriber}&limit=1`, { headers: { authorization: `ApiKey ${server.apiKey}` } });
  const [model] = (await res.json()).data;
  const now = Date.now();
  const ages = [[0, 'just now'], [200, '3 min ago'], [2 * 3600 + 100, '2 h ago'], [3 * 86400 + 100, '3 days ago']];
  const tag = randomBytes(3).toString('hex');
  const imported = ages.map(([seconds, expected], i) => {
    const createdAt = new Date(now - seconds * 1000);
    const m = {
      ...model, _id: newID(createdAt), _notificationId: newID(createdAt), transactionId: randomUUID(),
      createdAt: createdAt.toISOString(), deliveredAt: [createdAt.toISOString()],
      channel: 'in_app', subject: `Imported while you watched ${tag} #${i}`,
      content: [{ type: 'text', content: 'This message was written by another process after the page loaded.' }],
      read: false, seen: false,
      cta: { type: 'redirect', data: { url: 'https://app.example.com/live' }, action: { status: 'pending', buttons: [
        { type: 'primary', content: 'Accept', resultContent: 'Accepted' },
        { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
      ] } },
    };
    delete m.lastSeenDate;
    delete m.lastReadDate;
    delete m.title;
    return { message: m, expected };
  });
  // An email to the same subscriber, in the same import: the page must not list it.
  const email = { ...imported[0].message, _id: newID(), transactionId: randomUUID(), channel: 'email', subject: `Email ${tag}` };
  await server.import([...imported.map((x) => x.message), email]);
  s.imported = imported.map((x) => x.message);

  await inEveryTab('imported', async (page) => {
    for (const m of s.imported) await page.waitForSelector(row(m._id), { timeout: 15_000 });
    const listed = (await rows(page)).map((r) => r.id);
    assert.deepEqual(listed.slice(0, 4), s.imported.map((m) => m._id), 'the new messages at the top, newest first');
    assert.equal(listed.includes(email._id), false, 'the email is not listed');
    for (const { message: m, expected } of imported) {
      const time = page.locator(`${row(m._id)} time`);
      assert.equal(await time.textContent(), expected, `${m.subject}: its relative time`);
      assert.equal(await time.getAttribute('datetime'), m.createdAt, 'the exact time in datetime');
      assert.match(await time.getAttribute('title'), new RegExp(String(new Date(m.createdAt).getFullYear())), 'the absolute time in its title');
      assert.equal(await page.locator(`${row(m._id)} .title`).textContent(), m.subject);
      assert.deepEqual(await page.locator(`${row(m._id)} .buttons button`).allTextContents(), ['Accept', 'Decline']);
    }
    await badgeIs(page, before.unread + 4);
    assert.equal(await page.evaluate(() => window.sameDocument), true, 'the page was not reloaded');
  });
  assert.equal((await counts(server, subscriber)).unread, before.unread + 4, 'the server counts them unread');
  assert.equal(s.navigations, 0, 'no tab navigated');
});

test('a message read with a GraphQL mutation lowers the badge in both tabs at once', { timeout: 60_000 }, async () => {
  needsSetup();
  assert.equal(s.imported.length, 4, 'the import step failed');
  const { unread } = await counts(server, subscriber);
  const id = s.imported[3]._id;
  await keyGraphQL(server, 'mutation($s: String!, $id: ID!) { markMessages(subscriberId: $s, messageIds: [$id], read: true) { _id } }', { s: subscriber, id });
  await inEveryTab('read by the API', async (page) => {
    await badgeIs(page, unread - 1);
    await page.waitForSelector(`${row(id)}[data-read="true"]`, { timeout: 15_000 });
    assert.equal(await page.locator(`${row(id)} [data-testid="toggle-read"]`).textContent(), 'Mark unread');
  });
});

test('opening a message in one tab reads it, and the other tab shows it read', { timeout: 60_000 }, async () => {
  needsSetup();
  const { unread } = await counts(server, subscriber);
  const id = s.imported[2]._id;
  const [first] = s.tabs;
  s.current = first;
  await step('live-inbox', () => first, 'open', async () => {
    const open = first.locator(`${row(id)} [data-testid="open"]`);
    assert.equal(await open.getAttribute('aria-expanded'), 'false');
    await open.click({ timeout: 10_000 });
    assert.equal(await open.getAttribute('aria-expanded'), 'true');
  });
  await inEveryTab('read on open', async (page) => {
    await page.waitForSelector(`${row(id)}[data-read="true"]`, { timeout: 15_000 });
    await badgeIs(page, unread - 1);
  });
  const m = await message(server, subscriber, id);
  assert.equal(m.read, true, 'read on the server');
  assert.ok(m.lastReadDate, 'with the time it was read');
  assert.deepEqual(writes(2), [], 'the second tab wrote nothing');
});

test('pressing Accept in one tab shows "Accepted" in both', { timeout: 60_000 }, async () => {
  needsSetup();
  const id = s.imported[0]._id;
  const [first, second] = s.tabs;
  s.current = first;
  await step('live-inbox', () => first, 'press', async () => {
    await first.locator(`${row(id)} [data-testid="action-primary"]`).click({ timeout: 10_000 });
  });
  await inEveryTab('done', async (page) => {
    await page.waitForSelector(`${row(id)}[data-status="done"]`, { timeout: 15_000 });
    assert.equal(await page.locator(`${row(id)} [data-testid="result"]`).textContent(), 'Accepted', 'the pressed button\'s resultContent');
    assert.equal(await page.locator(`${row(id)} [data-testid="result"]`).isVisible(), true);
    assert.equal(await page.locator(`${row(id)} .buttons button`).count(), 0, 'no buttons once done');
    assert.equal(await page.locator(`${row(id)}`).getAttribute('data-read'), 'true', 'acting on a message reads it');
    assert.equal(await page.evaluate(() => window.sameDocument), true, 'the page was not reloaded');
  });
  // The second tab wrote nothing: every change came to it over its WebSocket.
  assert.deepEqual(writes(2), [], 'the second tab wrote nothing');
  assert.deepEqual(writes(1).map((e) => e.operation), ['Mark', 'Press'], 'the first tab opened one message and pressed one button');
  assert.equal(s.navigations, 0, 'no tab navigated');
  assert.equal(second.isClosed(), false);

  const m = await message(server, subscriber, id);
  assert.equal(m.cta.action.status, 'done');
  assert.equal(m.cta.action.result?.type, 'primary');
});

test('the page used session tokens only, asked nothing of other hosts, and raised no error', async () => {
  needsSetup();
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
    assert.ok(w.sent.some((f) => f.includes('messageCounts')), 'the socket subscribed to messageCounts');
  }

  assert.deepEqual(s.requests.filter((url) => !loopback(url)), [], 'requests to other hosts');
  assert.deepEqual(s.pageErrors, [], 'page errors');
});

after(async () => {
  await s.browser?.close();
  await server.stop();
});
