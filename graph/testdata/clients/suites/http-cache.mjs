// HTTP caching of GET queries: a query sent as GET /graphql?query=... is answered with
// Cache-Control: private, no-cache (a browser may keep it, but must revalidate; no shared
// cache may keep it, since the answer depends on the API key) and an ETag; asking again
// with If-None-Match gets 304 without a body while nothing changed, and 200 with a new
// ETag once the data did.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { markTargets, sharedSubscriberId } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { ctx, fetchWithKey, running } from '../lib/context.mjs';

const query = `{ messages(subscriberId: "${sharedSubscriberId}", transactionId: ["txn-mark"], limit: 10) { data { _id cta { action { status } } } } }`;

/** get sends the query as GET with the API key and the given headers. */
function get(headers = {}) {
  const url = new URL(ctx.graphqlURL);
  url.searchParams.set('query', query);
  return fetchWithKey(url, { headers: { accept: 'application/graphql-response+json, application/json', ...headers } });
}

/** directives returns the Cache-Control directives, lowercased and sorted. */
const directives = (res) => (res.headers.get('cache-control') ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean).sort();

/** etagOf returns the ETag of a 200 answer to the query, checking the answer on the way. */
async function etagOf(res) {
  const body = await res.text();
  assert.equal(res.status, 200, `GET /graphql answered ${res.status}: ${body}`);
  assert.equal(JSON.parse(body).errors, undefined, body);
  const etag = res.headers.get('etag');
  assert.match(etag ?? '', /^(W\/)?"[^"]*"$/, `ETag is a quoted entity tag, got ${etag}`);
  return etag;
}

describe('HTTP caching of GET /graphql', () => {
  before(running);

  test('a GET query answers Cache-Control: private, no-cache and an ETag', async () => {
    const res = await get();
    const body = await res.text();
    assert.equal(res.status, 200, `GET /graphql answered ${res.status}: ${body}`);
    // Both headers in one comparison, so that a failure shows what each one was.
    assert.deepEqual(
      { cacheControl: directives(res), etag: /^(W\/)?"[^"]*"$/.test(res.headers.get('etag') ?? '') },
      { cacheControl: ['no-cache', 'private'], etag: true },
      `Cache-Control: ${res.headers.get('cache-control')}, ETag: ${res.headers.get('etag')}`,
    );
  });

  test('the same GET with If-None-Match: <etag> answers 304 without a body', async () => {
    const etag = await etagOf(await get());
    const res = await get({ 'if-none-match': etag });
    const body = await res.text();
    assert.equal(res.status, 304, `answered ${res.status} ${body}`);
    assert.equal(body, '');
    assert.equal(res.headers.get('etag'), etag, 'a 304 repeats the ETag');
    assert.deepEqual(directives(res), ['no-cache', 'private'], 'a 304 repeats Cache-Control');
  });

  test('once the data changed, the old ETag gets 200 and a new ETag', async () => {
    const old = await etagOf(await get());
    const res = await fetchWithKey(ctx.graphqlURL, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'mutation($s: String!, $id: ID!) { markMessageAction(subscriberId: $s, messageId: $id, type: primary, status: done) { _id } }',
        variables: { s: sharedSubscriberId, id: markTargets.repeat._id },
      }),
    });
    assert.equal(res.status, 200, await res.text());
    const again = await get({ 'if-none-match': old });
    const etag = await etagOf(again);
    assert.notEqual(etag, old, 'the ETag changed with the data');
  });
});
