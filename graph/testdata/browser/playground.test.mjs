// The development playground as a person meets it: a real server built from the
// checkout, opened in Debian's Chromium. The schema must load on first open (the demo
// key goes with the introspection request), the example query must run, and the page
// must fetch nothing from any host but the server. A failed step leaves a screenshot.

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
