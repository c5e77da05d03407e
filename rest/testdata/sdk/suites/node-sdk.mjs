// The axios-based @novu/node: messages.list (which leaves out page 0 and a limit of 0,
// and sends transactionIds as transactionId[]=) and subscribers.markMessageActionSeen.
// Its answers are the raw JSON, compared field for field with what @novu/api received
// for the same query.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { MessageResponseDto$inboundSchema } from '@novu/api/models/components/index.js';

import { nodeClient, settle } from '../lib/clients.mjs';
import { ctx, ids, running } from '../lib/context.mjs';
import { markTargets, recordsA, select, sharedSubscriberId, unknownMessageId } from '../lib/fixture.mjs';
import { marked, stored } from './mark.mjs';

/** same lists through both SDKs and checks they got the same JSON; returns node's answer. */
async function same(filter) {
  const { transactionId, ...rest } = filter;
  const res = await ctx.nodeA.novu.messages.list({ ...rest, ...(transactionId && { transactionIds: transactionId }) });
  assert.equal(res.status, 200);
  await ctx.apiA.novu.messages.retrieve(filter);
  const raw = ctx.apiA.last();
  assert.equal(raw.status, 200);
  assert.deepEqual(res.data, raw.json, '@novu/node and @novu/api got the same page');
  const expected = select(filter);
  const page = filter.page ?? 0;
  const limit = filter.limit ?? 10;
  assert.deepEqual(ids(res.data.data), ids(expected.slice(page * limit, (page + 1) * limit)));
  assert.equal(res.data.totalCount, expected.length);
  return { res, url: ctx.nodeA.requests.at(-1) };
}

/** refused runs an @novu/node call that must fail with the given status and returns the error body. */
async function refused(promise, status) {
  const { value, error } = await settle(promise);
  assert.equal(value, undefined, `expected ${status}, got ${value?.status}`);
  assert.ok(error?.isAxiosError, `axios raised ${error}`);
  assert.equal(error.response?.status, status, JSON.stringify(error.response?.data));
  const body = error.response.data;
  assert.equal(body.statusCode, status, 'the body repeats the status');
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  return body;
}

/** query returns the decoded query of a URL the SDK asked for, as [key, value] pairs. */
const query = (url) => [...new URL(url).searchParams];

describe('@novu/node messages.list and subscribers.markMessageActionSeen', () => {
  before(running);

  it('nodeList200DefaultsMatchesApi', async () => {
    const { url } = await same({});
    assert.deepEqual(query(url), [], 'page 0 and the default limit are not sent');
  });

  it('nodeList200ChannelMatchesApi', async () => {
    await same({ channel: 'chat', limit: 100 });
  });

  it('nodeList200SubscriberIdMatchesApi', async () => {
    const { url } = await same({ subscriberId: 'zoë+ü/ok', limit: 100 });
    assert.deepEqual(query(url), [['limit', '100'], ['subscriberId', 'zoë+ü/ok']]);
  });

  it('nodeList200OneTransactionIdAsBrackets', async () => {
    const { url } = await same({ transactionId: ['txn-2'], limit: 100 });
    assert.deepEqual(query(url).filter(([k]) => k.startsWith('transactionId')), [['transactionId[]', 'txn-2']]);
  });

  it('nodeList200SeveralTransactionIdsAsBrackets', async () => {
    const { url } = await same({ transactionId: ['txn-3', 'txn-full', 'txn-bare'], limit: 100 });
    assert.deepEqual(query(url).filter(([k]) => k.startsWith('transactionId')),
      [['transactionId[]', 'txn-3'], ['transactionId[]', 'txn-full'], ['transactionId[]', 'txn-bare']]);
  });

  it('nodeList200CombinedMatchesApi', async () => {
    await same({ channel: 'in_app', subscriberId: sharedSubscriberId, transactionId: ['txn-mark', 'txn-full', 'txn-0'], limit: 100 });
  });

  it('nodeList200PagesMatchApi', async () => {
    const pages = Math.ceil(recordsA.length / 10);
    for (let page = 0; page < pages; page++) {
      const { res, url } = await same({ page, limit: 10 });
      assert.equal(res.data.hasMore, page < pages - 1);
      assert.equal(query(url).some(([k]) => k === 'page'), page > 0, 'page is sent only when not 0');
    }
  });

  it('nodeList200Limit0IsDroppedByTheSdk', async () => {
    const res = await ctx.nodeA.novu.messages.list({ limit: 0 });
    assert.deepEqual(query(ctx.nodeA.requests.at(-1)), [], 'the SDK does not send limit=0');
    assert.equal(res.data.pageSize, 10, 'so the server applies its default');
  });

  it('nodeList422Limit1001', async () => {
    const body = await refused(ctx.nodeA.novu.messages.list({ limit: 1001 }), 422);
    assert.ok(body.errors?.limit?.messages?.length > 0, JSON.stringify(body));
  });

  it('nodeList422PageMinus1', async () => {
    const body = await refused(ctx.nodeA.novu.messages.list({ page: -1 }), 422);
    assert.ok(body.errors?.page?.messages?.length > 0, JSON.stringify(body));
  });

  it('nodeList401UnknownKey', async () => {
    const stranger = nodeClient(ctx.url, 'f'.repeat(64));
    await refused(stranger.novu.messages.list({}), 401);
  });

  it('nodeMark201WithPayload', async () => {
    const id = markTargets.node._id;
    const prior = await stored(ctx.apiA, id);
    const payload = { choice: 'accept', list: [1, 'a', null], nested: { ok: true, n: 1.5 } };
    const res = await ctx.nodeA.novu.subscribers.markMessageActionSeen(sharedSubscriberId, id, 'primary', { status: 'done', payload });
    assert.equal(res.status, 201);
    assert.deepEqual(res.data, marked(prior, 'primary', 'done', payload));
    assert.deepEqual(await stored(ctx.apiA, id), res.data, '@novu/api lists what @novu/node marked');
  });

  it('nodeMark201WithoutPayloadKeepsIt', async () => {
    const id = markTargets.node._id;
    const prior = await stored(ctx.apiA, id);
    const res = await ctx.nodeA.novu.subscribers.markMessageActionSeen(sharedSubscriberId, id, 'secondary', { status: 'pending' });
    assert.equal(res.status, 201);
    assert.deepEqual(res.data, marked(prior, 'secondary', 'pending'));
  });

  it('nodeMark201AnswerPassesTheApiSchema', async () => {
    const res = await ctx.nodeA.novu.subscribers.markMessageActionSeen(sharedSubscriberId, markTargets.node._id, 'primary', { status: 'done' });
    const parsed = MessageResponseDto$inboundSchema.safeParse(res.data);
    assert.ok(parsed.success, parsed.error?.message);
  });

  it('nodeMark404UnknownMessage', async () => {
    await refused(ctx.nodeA.novu.subscribers.markMessageActionSeen(sharedSubscriberId, unknownMessageId, 'primary', { status: 'done' }), 404);
  });

  it('nodeMark422BadStatusReachesTheServer', async () => {
    const body = await refused(ctx.nodeA.novu.subscribers.markMessageActionSeen(sharedSubscriberId, markTargets.node._id, 'primary', { status: 'finished' }), 422);
    assert.ok(body.errors?.status?.messages?.length > 0, JSON.stringify(body));
  });

  it('nodeMark422BadType', async () => {
    const body = await refused(ctx.nodeA.novu.subscribers.markMessageActionSeen(sharedSubscriberId, markTargets.node._id, 'tertiary', { status: 'done' }), 422);
    assert.ok(body.errors?.type?.messages?.length > 0, JSON.stringify(body));
  });
});
