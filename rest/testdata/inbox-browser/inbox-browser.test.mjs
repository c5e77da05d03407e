// The platform's own <Inbox /> (@novu/react 3.19.2, bundled with its React for a page
// of another origin) in Debian's Chromium, against a server built from this checkout on
// a MariaDB database of its own (the inbox client suite's server and data, ../inbox/lib):
// it shows the subscriber's messages and unread badge, and the badge follows rows another
// writer inserts and updates with plain SQL, through the socket (/v1/inbox/socket).

import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import { envA, inboxA, records, shared, sharedA, unreadA } from '../inbox/lib/fixture.mjs';
import { Server } from '../inbox/lib/server.mjs';
import { launch, loopback, waitFor } from './lib/browser.mjs';
import { PageOrigin } from './lib/page.mjs';

const origin = new PageOrigin();
let server;
const s = {
  browser: null,
  page: null,
  requests: [], // every URL the browser asked for
  sockets: [], // { url, received: [frames] } of every WebSocket the page opened
  pageErrors: [],
};

/** hash is what the integrator's backend computes: hex HMAC-SHA256 of the subscriberId keyed with an API key. */
const hash = (key, subscriberId) => createHmac('sha256', key).update(subscriberId).digest('hex');

/** badge is the count the Inbox's bell shows, or null before it is drawn. */
async function badge() {
  const el = s.page.getByTestId('badge');
  if (!(await el.count())) return null;
  return Number(await el.textContent());
}

/** insertRow writes one in-app message of A's shared-user with the mariadb client, as another program would. */
async function insertRow(text) {
  const id = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex');
  const org = inboxA[0]._organizationId;
  await server.sql(`INSERT INTO messages (id, environment_id, organization_id, subscriber_id, created_at,
    transaction_id, subject, channel, email, phone, direct_webhook_url, title, cta, error_text, content)
    VALUES ('${id}', '${envA}', '${org}', '${sharedA._id}', UTC_TIMESTAMP(3), 'sql-${id}', '', 'in_app', '', '', '', '',
    '{"type":"redirect","action":{"status":"pending","buttons":[{"type":"primary","content":"Open"}]}}', '',
    '[{"type":"text","content":"${text}"}]')`);
  return id;
}

before(async () => {
  await origin.start();
  server = new Server({ origins: [origin.origin] });
  await server.start(records);
  const key = await server.apiKey(envA, 'inbox-browser');
  s.browser = await launch(s.requests);
  s.page = await s.browser.context.newPage();
  s.page.on('pageerror', (err) => s.pageErrors.push(String(err)));
  s.page.on('websocket', (ws) => {
    const socket = { url: ws.url(), received: [] };
    s.sockets.push(socket);
    ws.on('framereceived', (f) => socket.received.push(String(f.payload)));
  });
  const options = {
    applicationIdentifier: key.app, subscriberId: shared, subscriberHash: hash(key.key, shared),
    apiUrl: server.baseURL, socketUrl: `${server.baseURL.replace(/^http/, 'ws')}/v1/inbox/socket`,
  };
  await s.page.goto(`${origin.origin}/#${encodeURIComponent(JSON.stringify(options))}`);
}, { timeout: 600_000 });

after(async () => {
  await s.browser?.close();
  await server?.stop();
  await origin.stop();
});

test('the Inbox shows the unread badge and the messages', { timeout: 60_000 }, async () => {
  // 117 unread of 130: counted exactly, past the platform's 99.
  await waitFor(async () => (await badge()) === unreadA, 20_000, `the badge to show ${unreadA}`);
  await s.page.getByTestId('badge').click();
  // Newest first: the fixture's messages are numbered oldest to newest.
  for (const text of ['Message 129', 'Message 128', 'Message 127']) {
    await s.page.getByText(text, { exact: true }).waitFor({ timeout: 20_000 });
  }
  const socket = await waitFor(() => s.sockets.find((w) => w.url.includes('/v1/inbox/socket')), 20_000, 'the Inbox to open its socket');
  const url = new URL(socket.url);
  assert.equal(`${url.protocol}//${url.host}${url.pathname}`, `${server.baseURL.replace(/^http/, 'ws')}/v1/inbox/socket`);
  assert.ok(url.searchParams.get('token'), 'the socket carries the session token in its query');
});

test('the badge follows a row inserted with SQL, and the message appears', { timeout: 60_000 }, async () => {
  const socket = s.sockets.find((w) => w.url.includes('/v1/inbox/socket'));
  const id = await insertRow('Inserted with SQL');
  const inserted = Date.now();
  await waitFor(async () => (await badge()) === unreadA + 1, 10_000, `the badge to show ${unreadA + 1}`);
  console.log(`badge moved ${Date.now() - inserted} ms after the INSERT returned`);
  // The count may come before the message (the socket reads the counts after each batch
  // of events it takes: inbox.test.mjs, "live socket"); both come.
  const announced = () => socket.received.map((f) => JSON.parse(f)).find((f) => f.event === 'notification_received');
  await waitFor(async () => announced() !== undefined, 10_000, 'the socket to announce the inserted row');
  assert.equal(announced().data?.message?._id, id, 'the socket announced the inserted row');
  // The open list shows it, or offers it as new, as the Inbox does while it is open.
  const text = s.page.getByText('Inserted with SQL', { exact: true });
  const banner = s.page.getByText(/new notification/i);
  await waitFor(async () => (await text.count()) > 0 || (await banner.count()) > 0, 10_000, 'the new message or its banner');
  if (!(await text.count())) await banner.first().click();
  await text.waitFor({ timeout: 10_000 });
});

test('the badge follows rows another writer marks read with SQL', { timeout: 60_000 }, async () => {
  const newest = inboxA.filter((m) => !m.read).slice(0, 3).map((m) => `'${m._id}'`);
  await server.sql(`UPDATE messages SET \`read\` = TRUE WHERE id IN (${newest.join(', ')})`);
  await waitFor(async () => (await badge()) === unreadA + 1 - 3, 10_000, `the badge to show ${unreadA - 2}`);
});

test('nothing left the machine and the page raised no error', () => {
  assert.deepEqual(s.requests.filter((u) => !loopback(u)), []);
  assert.deepEqual(s.pageErrors, []);
});
