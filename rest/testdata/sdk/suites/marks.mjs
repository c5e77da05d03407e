// The read and seen marks of /v1 through both SDKs: @novu/api's
// subscribers.messages.markAll (POST .../messages/mark-all) and markAllAs (POST
// .../messages/mark-as), @novu/node's markAllMessagesAs and markMessageAs (POST
// .../messages/markAs), on marks-user in both environments. Every write is read back
// through GraphQL, and every refusal changes nothing in either environment.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { ErrorDto, ValidationErrorDto } from '@novu/api/models/errors/index.js';

import { settle } from '../lib/clients.mjs';
import { ctx, running } from '../lib/context.mjs';
import { marksA, marksB, marksOtherA, marksSubscriberId, unknownMessageId } from '../lib/fixture.mjs';

/** states reads marks-user's messages through GraphQL with key: "read,seen" (or less) by _id. */
async function states(key) {
  const res = await fetch(`${ctx.url}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `ApiKey ${key}` },
    body: JSON.stringify({
      query: 'query($s: String) { messages(subscriberId: $s, limit: 100) { data { _id read seen } } }',
      variables: { s: marksSubscriberId },
    }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return Object.fromEntries(body.data.messages.data.map((m) => [m._id, [m.read && 'read', m.seen && 'seen'].filter(Boolean).join(',')]));
}

/** every maps each message to flags. */
const every = (messages, flags) => Object.fromEntries(messages.map((m) => [m._id, flags]));

/** refusedBy runs an SDK call that must fail with `status` as `type`, changing neither environment. */
async function refusedBy(api, call, status, type) {
  const before = [await states(ctx.keyA), await states(ctx.keyB)];
  const { value, error } = await settle(call(api.novu));
  assert.equal(value, undefined, `expected ${status}, the SDK returned a value`);
  assert.equal(api.last().status, status, api.last().body);
  assert.ok(error instanceof type, `the SDK raised ${error?.name} (${error?.message}), not ${type.name}`);
  assert.equal(error.statusCode, status);
  assert.deepEqual([await states(ctx.keyA), await states(ctx.keyB)], before, 'a refusal changes nothing');
  return error;
}

describe('read and seen marks', () => {
  before(running);

  it('marks0StartUnreadAndUnseen', async () => {
    assert.deepEqual(await states(ctx.keyA), every([...marksA, ...marksOtherA], ''));
    assert.deepEqual(await states(ctx.keyB), every(marksB, ''));
  });

  it('markAllAs201OneIdAnswersTheRecord', async () => {
    const [m] = marksA;
    const { result } = await ctx.apiA.novu.subscribers.messages.markAllAs({ messageId: m._id, markAs: 'seen' }, marksSubscriberId);
    const raw = ctx.apiA.last();
    assert.equal(raw.status, 201, raw.body);
    assert.deepEqual(JSON.parse(raw.requestBody), { messageId: m._id, markAs: 'seen' });
    assert.equal(result.length, 1);
    assert.equal(result[0].id, m._id);
    assert.equal(result[0].seen, true);
    assert.equal(result[0].read, false);
    assert.equal((await states(ctx.keyA))[m._id], 'seen');
  });

  it('markAllAs201ReadAlsoSeesAndLeavesOutOthers', async () => {
    const ids = [marksA[1]._id, marksA[2]._id, marksB[0]._id, unknownMessageId];
    const { result } = await ctx.apiA.novu.subscribers.messages.markAllAs({ messageId: ids, markAs: 'read' }, marksSubscriberId);
    assert.deepEqual(result.map((m) => m.id).sort(), [marksA[1]._id, marksA[2]._id].sort(), 'B\'s message and the unknown id are left out');
    assert.ok(result.every((m) => m.read && m.seen));
    const a = await states(ctx.keyA);
    assert.equal(a[marksA[1]._id], 'read,seen');
    assert.equal(a[marksA[2]._id], 'read,seen');
    assert.deepEqual(await states(ctx.keyB), every(marksB, ''), 'the other environment\'s message is unchanged');
  });

  it('markAll201ReadCountsAndMarksInAppOnly', async () => {
    const { result } = await ctx.apiA.novu.subscribers.messages.markAll({ markAs: 'read' }, marksSubscriberId);
    assert.equal(ctx.apiA.last().status, 201);
    assert.equal(result, 2, 'the two in-app messages not read yet');
    assert.deepEqual(await states(ctx.keyA), { ...every(marksA, 'read,seen'), ...every(marksOtherA, '') });
    assert.deepEqual(await states(ctx.keyB), every(marksB, ''));
  });

  it('markAll201UnreadKeepsSeen', async () => {
    const { result } = await ctx.apiA.novu.subscribers.messages.markAll({ markAs: 'unread' }, marksSubscriberId);
    assert.equal(result, 4);
    assert.deepEqual(await states(ctx.keyA), { ...every(marksA, 'seen'), ...every(marksOtherA, '') });
  });

  it('markAll201UnseenThenSeenOnTenantB', async () => {
    assert.equal((await ctx.apiB.novu.subscribers.messages.markAll({ markAs: 'seen' }, marksSubscriberId)).result, 2);
    assert.deepEqual(await states(ctx.keyB), every(marksB, 'seen'));
    assert.equal((await ctx.apiB.novu.subscribers.messages.markAll({ markAs: 'unseen' }, marksSubscriberId)).result, 2);
    assert.deepEqual(await states(ctx.keyB), every(marksB, ''));
    assert.deepEqual(await states(ctx.keyA), { ...every(marksA, 'seen'), ...every(marksOtherA, '') }, 'A is unchanged');
  });

  it('markAll201RepeatChangesNothing', async () => {
    assert.equal((await ctx.apiA.novu.subscribers.messages.markAll({ markAs: 'seen' }, marksSubscriberId)).result, 0);
  });

  it('nodeMarkAllMessagesAs201', async () => {
    const res = await ctx.nodeB.novu.subscribers.markAllMessagesAs(marksSubscriberId, 'read');
    assert.equal(res.status, 201);
    assert.equal(res.data, 2);
    assert.deepEqual(await states(ctx.keyB), every(marksB, 'read,seen'));
  });

  it('nodeMarkMessageAs201SetsWhatItNames', async () => {
    const m = marksB[0];
    const res = await ctx.nodeB.novu.subscribers.markMessageAs(marksSubscriberId, m._id, { seen: false });
    assert.equal(res.status, 201);
    assert.deepEqual(res.data.map((r) => [r._id, r.read, r.seen]), [[m._id, true, false]]);
    assert.equal((await states(ctx.keyB))[m._id], 'read');
    const again = await ctx.nodeB.novu.subscribers.markMessageSeen(marksSubscriberId, m._id);
    assert.equal(again.data[0].seen, true);
    assert.equal((await states(ctx.keyB))[m._id], 'read,seen');
  });

  it('markAll404AnotherTenantsSubscriber', async () => {
    await refusedBy(ctx.apiB, (novu) => novu.subscribers.messages.markAll({ markAs: 'unread' }, 'alice'), 404, ErrorDto);
  });

  it('markAll404UnknownSubscriber', async () => {
    await refusedBy(ctx.apiA, (novu) => novu.subscribers.messages.markAll({ markAs: 'unread' }, 'nobody-here'), 404, ErrorDto);
  });

  it('markAllAs404UnknownSubscriber', async () => {
    await refusedBy(ctx.apiA, (novu) => novu.subscribers.messages.markAllAs({ messageId: marksA[0]._id, markAs: 'unseen' }, 'nobody-here'), 404, ErrorDto);
  });

  it('markAllAs201AnotherTenantsMessageChangesNothing', async () => {
    const before = await states(ctx.keyA);
    const { result } = await ctx.apiB.novu.subscribers.messages.markAllAs({ messageId: [marksA[0]._id], markAs: 'unseen' }, marksSubscriberId);
    assert.deepEqual(result, [], 'A\'s message does not exist for B');
    assert.deepEqual(await states(ctx.keyA), before);
  });

  it('markAll422FeedIdentifier', async () => {
    const error = await refusedBy(ctx.apiA, (novu) => novu.subscribers.messages.markAll({ markAs: 'read', feedIdentifier: 'news' }, marksSubscriberId), 422, ValidationErrorDto);
    assert.ok(error.errors.feedIdentifier?.messages?.length > 0, JSON.stringify(error.errors));
  });

  it('markAll422BadMarkAsInTheDocumentedBody', async () => {
    // The SDK refuses a markAs outside its enum before sending, so the request is raw.
    const before = await states(ctx.keyA);
    for (const route of ['mark-all', 'mark-as']) {
      const res = await fetch(`${ctx.url}/v1/subscribers/${marksSubscriberId}/messages/${route}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `ApiKey ${ctx.keyA}` },
        body: JSON.stringify(route === 'mark-all' ? { markAs: 'archived' } : { markAs: 'archived', messageId: marksA[0]._id }),
      });
      const body = await res.json();
      assert.equal(res.status, 422);
      assert.equal(body.statusCode, 422);
      assert.deepEqual(Object.keys(body.errors), ['markAs']);
      assert.equal(body.errors.markAs.value, 'archived');
      assert.equal(typeof body.message, 'string');
      assert.equal(body.path, `/v1/subscribers/${marksSubscriberId}/messages/${route}`);
    }
    assert.deepEqual(await states(ctx.keyA), before);
  });
});
