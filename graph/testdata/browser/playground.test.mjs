// The development playground as a person meets it: a real server built from the
// checkout, opened in Debian's Chromium. The schema must load on first open (the demo
// key goes with the introspection request), the example query must run, a subscription
// must show a change made through the API meanwhile, and the page must fetch nothing from
// any host but the server. A failed step leaves a screenshot.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';

import { launch, loopback, step, waitFor } from './lib/browser.mjs';
import { Server } from './lib/server.mjs';


const server = new Server();
const s = {
  browser: null, // Chromium and its fresh profile
  context: null,
  page: null,
  requests: [], // every URL the browser asked for
  graphql: [], // { body, status, authorization, json } of each /graphql exchange
  sockets: [], // { url, sent, closed } of each WebSocket the page opened, sent holding its frames
  pageErrors: [], // uncaught exceptions and console errors (a CSP refusal is one)
};

function needsSetup() {
  if (!s.page) throw new Error('setup failed; see the first test');
}

test('setup: build and start the server, launch Chromium, open the playground', { timeout: 600_000 }, async () => {
  await server.start();
  s.browser = await launch('playground', s.requests);
  s.context = s.browser.context;
  s.context.on('response', async (res) => {
    const req = res.request();
    if (new URL(req.url()).pathname !== '/graphql') return;
    const entry = { body: req.postData() ?? '', status: res.status(), authorization: (await req.allHeaders()).authorization };
    try { entry.json = await res.json(); } catch { /* not JSON */ }
    s.graphql.push(entry);
  });

  s.page = s.context.pages()[0] ?? await s.context.newPage();
  s.page.on('pageerror', (err) => s.pageErrors.push(`uncaught: ${err.message}`));
  s.page.on('console', (msg) => { if (msg.type() === 'error') s.pageErrors.push(`console: ${msg.text()}`); });
  s.page.on('websocket', (ws) => {
    const socket = { url: ws.url(), sent: [], closed: false };
    s.sockets.push(socket);
    ws.on('framesent', (f) => socket.sent.push(String(f.payload)));
    ws.on('close', () => { socket.closed = true; });
  });
  await step('playground', () => s.page, 'open', async () => {
    const res = await s.page.goto(`${server.baseURL}/`, { waitUntil: 'load' });
    assert.equal(res.status(), 200, 'GET / status');
  });
});

test('the schema loads on first open, with the demo key in the header editor', { timeout: 60_000 }, async () => {
  needsSetup();
  const { page } = s;
  await step('playground', () => s.page, 'schema', async () => {
    await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
    const introspection = () => s.graphql.find((g) => g.body.includes('IntrospectionQuery'));
    await waitFor(() => introspection(), 30_000, 'an introspection request');
    const intro = introspection();
    assert.equal(intro.status, 200, `introspection status; answer: ${JSON.stringify(intro.json)?.slice(0, 300)}`);
    assert.equal(intro.authorization, `ApiKey ${server.apiKey}`, 'introspection sent the demo key');
    assert.ok(intro.json?.data?.__schema, `introspection returned a schema: ${JSON.stringify(intro.json)?.slice(0, 300)}`);

    const headers = page.locator('section.graphiql-editor-tool');
    await headers.getByText(server.apiKey).waitFor({ timeout: 10_000 });

    await page.locator('button[aria-label="Show Documentation Explorer"]').click();
    const explorer = page.locator('.graphiql-doc-explorer');
    await explorer.locator('a.graphiql-doc-explorer-type-name', { hasText: /^Query$/ }).click({ timeout: 10_000 });
    await explorer.locator('a.graphiql-doc-explorer-field-name', { hasText: /^messages$/ }).waitFor({ timeout: 10_000 });
  });
});

test('the default query runs and shows totalCount', { timeout: 60_000 }, async () => {
  needsSetup();
  const { page } = s;
  await step('playground', () => s.page, 'run', async () => {
    const before = s.graphql.length;
    await page.locator('.graphiql-execute-button').click();
    const result = page.locator('.result-window');
    await result.getByText('"totalCount"').waitFor({ timeout: 20_000 });
    // The response listener reads the body asynchronously: the pane can show the result
    // before the exchange is recorded.
    await waitFor(() => s.graphql.slice(before).some((g) => g.body.includes('messages')), 10_000, 'the query went to /graphql');
    const run = s.graphql.slice(before).find((g) => g.body.includes('messages'));
    assert.equal(run.status, 200, `query status; answer: ${JSON.stringify(run.json)?.slice(0, 300)}`);
    assert.equal(run.json?.errors, undefined, `query errors: ${JSON.stringify(run.json?.errors)}`);
    assert.ok(run.json?.data?.messages?.totalCount > 0, `totalCount of the demo data: ${JSON.stringify(run.json)?.slice(0, 300)}`);
    assert.doesNotMatch(await result.innerText(), /"errors"/, 'the result pane shows no error');
  });
});

/** api calls the server's REST API with the demo key and returns the parsed answer. */
async function api(method, path, body) {
  const res = await fetch(`${server.baseURL}${path}`, {
    method,
    headers: { Authorization: `ApiKey ${server.apiKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}

/**
 * setQuery replaces the query editor's text and waits until GraphiQL has parsed it (it
 * does so 100 ms after a change): run before that, it would send the old operation name.
 */
async function setQuery(text, operation) {
  const editor = s.page.locator('.graphiql-query-editor .CodeMirror');
  await editor.evaluate((el, q) => el.CodeMirror.setValue(q), text);
  await s.page.waitForFunction(([q, op]) => {
    const cm = document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror;
    return cm.getValue() === q && cm.documentAST?.definitions?.[0]?.operation === op;
  }, [text, operation], { timeout: 5_000 });
}

test('a subscription runs over a WebSocket with the demo key and shows a change made through the API', { timeout: 90_000 }, async () => {
  needsSetup();
  const { page } = s;
  const subscriber = 'user-1-00000';
  await step('playground', () => s.page, 'subscription', async () => {
    const list = await api('GET', `/v1/messages?subscriberId=${subscriber}&channel=in_app&limit=1`);
    assert.equal(list.status, 200, `GET /v1/messages: ${list.text.slice(0, 300)}`);
    const id = list.json?.data?.[0]?._id;
    assert.match(id ?? '', /^[0-9a-f]{24}$/, `a message of ${subscriber}: ${list.text.slice(0, 300)}`);

    const query = page.locator('.graphiql-query-editor .CodeMirror');
    const previous = await query.evaluate((el) => el.CodeMirror.getValue());
    await setQuery(`subscription { messageEvents(subscriberId: "${subscriber}") { kind message { _id cta { action { status } } } } }`, 'subscription');
    const httpBefore = s.graphql.length;
    const socketsBefore = s.sockets.length;
    await page.locator('.graphiql-execute-button').click();

    // The subscription is live once its subscribe frame went out and the server had a
    // moment to register it; a change made before that would not be an event of it.
    const subscribed = () => s.sockets.slice(socketsBefore).find((w) => w.sent.some((f) => f.includes('"subscribe"')));
    await waitFor(subscribed, 15_000, 'a WebSocket that sent the subscription');
    const socket = subscribed();
    assert.equal(socket.url, `${server.baseURL.replace(/^http/, 'ws')}/graphql`, 'the WebSocket URL');
    await new Promise((r) => setTimeout(r, 500));

    const result = page.locator('.result-window');
    const shown = async () => {
      const text = await result.innerText();
      return text.includes('"kind": "updated"') && text.includes(id) ? text : null;
    };
    // Should the server still have been registering it, the next mark is a change too
    // (every UPDATE moves the row's change stamp): at most three marks, 5 s each.
    let text = null;
    for (let attempt = 1; attempt <= 3 && !text; attempt++) {
      const mark = await api('POST', `/v1/subscribers/${subscriber}/messages/${id}/actions/primary`, { status: 'done' });
      assert.equal(mark.status, 201, `mark ${id}: ${mark.text.slice(0, 300)}`);
      const deadline = Date.now() + 5_000;
      while (!(text = await shown()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(text, `the result pane shows the update of ${id}: ${await result.innerText()}`);
    assert.match(text, /"status": "done"/, 'the event carries the message as marked');
    assert.doesNotMatch(text, /"errors"/, 'the result pane shows no error');

    const init = socket.sent.map((f) => JSON.parse(f)).find((m) => m.type === 'connection_init');
    assert.deepEqual(init?.payload, { Authorization: `ApiKey ${server.apiKey}` }, `connection_init carries the demo key: ${JSON.stringify(init)}`);
    assert.deepEqual(s.graphql.slice(httpBefore).filter((g) => g.body.includes('messageEvents')).map((g) => g.body.slice(0, 80)), [],
      'subscription requests sent over HTTP');

    // Stopping it ends the subscription, and the lazy client then closes the socket; the
    // example goes back in the editor for the tests after.
    await page.locator('button[aria-label="Stop query (Ctrl-Enter)"]').click({ timeout: 5_000 });
    await waitFor(() => socket.closed, 10_000, 'the WebSocket to close once the subscription stopped');
    assert.ok(socket.sent.some((f) => JSON.parse(f).type === 'complete'), `a complete frame was sent: ${socket.sent.join('\n')}`);
    await setQuery(previous, 'query');
  });
});

test('a key typed into the header editor replaces the configured one', { timeout: 60_000 }, async () => {
  needsSetup();
  const { page } = s;
  await step('playground', () => s.page, 'override', async () => {
    const errorsBefore = s.pageErrors.length;
    await page.evaluate(() => {
      // The tool section holds the variables editor too, hidden while headers show.
      document.querySelector('section.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror').CodeMirror
        .setValue('{"authorization": "ApiKey not-a-key"}');
    });
    const before = s.graphql.length;
    await page.locator('.graphiql-execute-button').click();
    await waitFor(() => s.graphql.slice(before).some((g) => g.body.includes('messages')), 20_000, 'the query with the typed key');
    const run = s.graphql.slice(before).find((g) => g.body.includes('messages'));
    assert.equal(run.authorization, 'ApiKey not-a-key', 'the typed key was sent, alone');
    assert.notEqual(run.status, 200, `a wrong key is refused: ${JSON.stringify(run.json)?.slice(0, 300)}`);
    // Not the demo key, on purpose: neither this request nor Chromium's report of its 401
    // is a fault for the last test.
    s.graphql.splice(before);
    s.pageErrors = [...s.pageErrors.slice(0, errorsBefore), ...s.pageErrors.slice(errorsBefore).filter((e) => !e.includes('status of 401'))];
  });
});

test('the page asked nothing of any host but the server, and raised no error', async () => {
  needsSetup();
  await step('playground', () => s.page, 'offline', async () => {
    const elsewhere = s.requests.filter((url) => !loopback(url));
    assert.deepEqual(elsewhere, [], 'requests to other hosts');
    assert.ok(s.requests.some((url) => url.includes('/playground/assets/graphiql.min.js')), `the embedded GraphiQL was loaded: ${s.requests.join('\n')}`);
    assert.deepEqual(s.pageErrors, [], 'page errors (a CSP refusal shows here)');
    const keyless = s.graphql.filter((g) => g.authorization !== `ApiKey ${server.apiKey}`);
    assert.deepEqual(keyless.map((g) => g.body.slice(0, 80)), [], '/graphql requests without the demo key');
  });
});

after(async () => {
  await s.browser?.close();
  await server.stop();
});
