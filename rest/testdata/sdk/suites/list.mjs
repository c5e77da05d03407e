// GET /v1/messages through @novu/api's messages.retrieve: every filter alone and combined,
// the page envelope, and paging to the last page.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { ctx, ids, running } from '../lib/context.mjs';
import { recordsA, select, sharedSubscriberId } from '../lib/fixture.mjs';

/**
 * retrieve lists through the SDK and checks the answer against the fixture: the page of
 * `expected` (all matching records, newest first) the request asks for, the envelope,
 * and that the raw JSON and the SDK's parsed records agree on the ids.
 */
export async function retrieve(request, expected) {
  const { result, headers } = await ctx.apiA.novu.messages.retrieve(request);
  const raw = ctx.apiA.last();
  assert.equal(raw.status, 200);
  const page = request.page ?? 0;
  const limit = request.limit ?? 10;
  const want = expected.slice(page * limit, (page + 1) * limit);
  assert.deepEqual(ids(result.data), ids(want), 'ids of the page, in order');
  assert.deepEqual(ids(raw.json.data), ids(want), 'ids of the raw page');
  assert.equal(result.totalCount, expected.length, 'totalCount');
  assert.equal(result.hasMore, (page + 1) * limit < expected.length, 'hasMore');
  assert.equal(result.pageSize, limit, 'pageSize');
  assert.equal(result.page, page, 'page');
  return { result, headers, raw };
}

/** walk pages through a filter until hasMore is false and checks every page on the way. */
async function walk(filter, limit) {
  const expected = select(filter);
  const lastPage = Math.max(0, Math.ceil(expected.length / limit) - 1);
  const seen = [];
  for (let page = 0; ; page++) {
    assert.ok(page <= lastPage, `hasMore was true on page ${page - 1}, past the last page ${lastPage}`);
    const { result } = await retrieve({ ...filter, page, limit }, expected);
    seen.push(...ids(result.data));
    if (!result.hasMore) {
      assert.equal(page, lastPage, 'hasMore turned false on the last page, not earlier');
      break;
    }
  }
  assert.equal(new Set(seen).size, seen.length, 'no message appears on two pages');
  assert.deepEqual(seen, ids(expected), 'every message once, newest createdAt first, ties by _id descending');
  return expected;
}

describe('@novu/api messages.retrieve', () => {
  before(running);

  it('list200Defaults: page 0, 10 messages, newest first', async () => {
    await retrieve({}, select());
  });

  for (const channel of ['in_app', 'email', 'sms', 'chat', 'push']) {
    it(`list200Channel ${channel}`, async () => {
      const expected = select({ channel });
      assert.ok(expected.length > 0);
      await retrieve({ channel, limit: 100 }, expected);
    });
  }

  for (const subscriberId of [sharedSubscriberId, 'alice', 'zoë+ü/ok']) {
    it(`list200SubscriberId ${subscriberId}`, async () => {
      const expected = select({ subscriberId });
      assert.ok(expected.length > 0);
      await retrieve({ subscriberId, limit: 100 }, expected);
    });
  }

  it('list200UnknownSubscriberIsEmpty', async () => {
    await retrieve({ subscriberId: 'nobody-at-all', limit: 100 }, []);
  });

  it('list200TransactionIdOne', async () => {
    await retrieve({ transactionId: ['txn-1'], limit: 100 }, select({ transactionId: ['txn-1'] }));
  });

  it('list200TransactionIdSeveral', async () => {
    const transactionId = ['txn-0', 'txn-2', 'txn-full'];
    const { raw } = await retrieve({ transactionId, limit: 100 }, select({ transactionId }));
    assert.deepEqual(new URL(raw.url).searchParams.getAll('transactionId'), transactionId, 'the SDK repeats the key');
  });

  it('list200TransactionIdUnknownIsEmpty', async () => {
    await retrieve({ transactionId: ['no-such-transaction'], limit: 100 }, []);
  });

  for (const filter of [
    { channel: 'in_app', subscriberId: sharedSubscriberId },
    { channel: 'email', transactionId: ['txn-1', 'txn-full'] },
    { subscriberId: 'bob', transactionId: ['txn-bare', 'txn-2'] },
    { channel: 'in_app', subscriberId: sharedSubscriberId, transactionId: ['txn-mark', 'txn-full'] },
    { channel: 'sms', subscriberId: 'alice', transactionId: ['txn-full'] },
  ]) {
    it(`list200Combined ${JSON.stringify(filter)}`, async () => {
      await retrieve({ ...filter, limit: 100 }, select(filter));
    });
  }

  it('list200HeadersTheSdkExposes', async () => {
    const { headers } = await retrieve({ limit: 1 }, select());
    assert.match(headers['content-type']?.[0] ?? '', /^application\/json/);
    assert.equal(headers['x-request-id']?.length, 1, 'X-Request-Id');
    for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      assert.match(headers[h]?.[0] ?? '', /^\d+$/, h);
    }
  });

  it('list200PagesOf10ToTheLastPage', async () => {
    const all = await walk({}, 10);
    assert.equal(all.length, recordsA.length);
  });

  it('list200PagesOf7EndExactlyOnAFullPage', async () => {
    assert.equal(recordsA.length % 7, 0, 'the fixture fills the last page of 7 exactly');
    await walk({}, 7);
    await retrieve({ page: recordsA.length / 7, limit: 7 }, select());
  });

  it('list200FilteredPagesOf4', async () => {
    await walk({ channel: 'in_app', transactionId: ['txn-mark', 'txn-0', 'txn-1', 'txn-2', 'txn-3'] }, 4);
  });

  it('list200PagePastTheEndIsEmpty', async () => {
    const { result } = await retrieve({ page: 100, limit: 10 }, select());
    assert.deepEqual(result.data, []);
  });

  it('list200Limit1000HoldsEverything', async () => {
    await retrieve({ limit: 1000 }, select());
  });
});
