// POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type} through
// @novu/api's subscribers.messages.updateAsSeen: both buttons, both states, with and
// without payload, repeated, and with idempotency keys.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';

import { settle } from '../lib/clients.mjs';
import { ctx, running } from '../lib/context.mjs';
import { markTargets, sharedSubscriberId } from '../lib/fixture.mjs';

/** stored returns the raw JSON of one message of the shared subscriber as the list sends it. */
export async function stored(api, messageId) {
  await api.novu.messages.retrieve({ subscriberId: sharedSubscriberId, transactionId: ['txn-mark'], limit: 100 });
  const raw = api.last();
  assert.equal(raw.status, 200);
  return raw.json.data.find((m) => m._id === messageId);
}

/** mark presses a button through the SDK and returns the parsed record, headers and raw answer. */
export async function mark(api, messageId, type, dto, idempotencyKey) {
  const { result, headers } = await api.novu.subscribers.messages.updateAsSeen({
    messageId, type, subscriberId: sharedSubscriberId, markMessageActionAsSeenDto: dto, idempotencyKey,
  });
  const raw = api.last();
  assert.equal(raw.status, 201, `mark answered ${raw.status}: ${raw.body}`);
  assert.equal(result.id, messageId);
  return { result, headers, raw };
}

/** marked is the raw record `prior` with only the call-to-action's mark changed. */
export function marked(prior, type, status, payload) {
  const want = structuredClone(prior);
  want.cta.action ??= {};
  want.cta.action.status = status;
  want.cta.action.result = { ...want.cta.action.result, type };
  if (payload !== undefined) want.cta.action.result.payload = payload;
  return want;
}

describe('@novu/api subscribers.messages.updateAsSeen', () => {
  before(running);

  it('mark201PrimaryDoneChangesOnlyTheAction', async () => {
    const id = markTargets.api._id;
    const prior = await stored(ctx.apiA, id);
    assert.equal(prior.cta.action.status, 'pending');
    const { result, raw } = await mark(ctx.apiA, id, 'primary', { status: 'done' });
    assert.equal(result.cta.action.status, 'done');
    assert.equal(result.cta.action.result.type, 'primary');
    assert.deepEqual(raw.json, marked(prior, 'primary', 'done'));
    assert.deepEqual(await stored(ctx.apiA, id), raw.json, 'the list shows the marked record');
  });

  it('mark201SecondaryPending', async () => {
    const id = markTargets.api._id;
    const prior = await stored(ctx.apiA, id);
    const { result, raw } = await mark(ctx.apiA, id, 'secondary', { status: 'pending' });
    assert.equal(result.cta.action.status, 'pending');
    assert.equal(result.cta.action.result.type, 'secondary');
    assert.deepEqual(raw.json, marked(prior, 'secondary', 'pending'));
  });

  it('mark201WithoutPayloadKeepsTheStoredPayload', async () => {
    const id = markTargets.apiPayload._id;
    const prior = await stored(ctx.apiA, id);
    assert.deepEqual(prior.cta.action.result.payload, markTargets.apiPayload.cta.action.result.payload);
    const { result, raw } = await mark(ctx.apiA, id, 'primary', { status: 'done' });
    assert.deepEqual(JSON.parse(raw.requestBody), { status: 'done' }, 'the SDK sends no payload');
    assert.deepEqual(raw.json, marked(prior, 'primary', 'done'));
    assert.deepEqual(result.cta.action.result.payload, prior.cta.action.result.payload);
  });

  it('mark201WithPayloadStoresWhatTheSdkSends', async () => {
    // @novu/api 3.19.1 describes the payload as an object without properties, and its
    // zod schema strips every key: whatever the caller gives, it sends {}.
    const id = markTargets.apiPayload._id;
    const prior = await stored(ctx.apiA, id);
    const { result, raw } = await mark(ctx.apiA, id, 'secondary', { status: 'pending', payload: { choice: 'accept', n: 2 } });
    assert.deepEqual(JSON.parse(raw.requestBody), { status: 'pending', payload: {} }, 'the SDK sends payload {}');
    assert.deepEqual(raw.json, marked(prior, 'secondary', 'pending', {}));
    assert.deepEqual(result.cta.action.result.payload, {});
  });

  it('mark201DoneThenPending', async () => {
    const id = markTargets.repeat._id;
    const done = await mark(ctx.apiA, id, 'primary', { status: 'done' });
    assert.equal(done.result.cta.action.status, 'done');
    const pending = await mark(ctx.apiA, id, 'primary', { status: 'pending' });
    assert.equal(pending.result.cta.action.status, 'pending');
    assert.deepEqual(pending.raw.json, marked(done.raw.json, 'primary', 'pending'));
  });

  it('mark201RepeatedGivesTheSameRecord', async () => {
    const id = markTargets.repeat._id;
    const first = await mark(ctx.apiA, id, 'secondary', { status: 'done' });
    const second = await mark(ctx.apiA, id, 'secondary', { status: 'done' });
    assert.deepEqual(second.raw.json, first.raw.json);
    assert.deepEqual(second.result, first.result);
    assert.notEqual(second.raw.requestHeaders.get('idempotency-key'), first.raw.requestHeaders.get('idempotency-key'),
      'the SDK sends a fresh idempotency key of its own on each call');
  });

  it('mark201SameIdempotencyKeyReplaysTheAnswer', async () => {
    const id = markTargets.idempotent._id;
    const key = randomUUID();
    const first = await mark(ctx.apiA, id, 'primary', { status: 'done' }, key);
    assert.equal(first.raw.requestHeaders.get('idempotency-key'), key, 'the SDK sent the key given');
    assert.equal(first.headers['idempotency-replay'], undefined, 'the first answer is not a replay');
    const second = await mark(ctx.apiA, id, 'primary', { status: 'done' }, key);
    assert.equal(second.raw.body, first.raw.body, 'the replay is byte for byte the first answer');
    assert.deepEqual(second.result, first.result);
    assert.deepEqual(second.headers['idempotency-replay'], ['true'], 'the SDK exposes the replay header');
  });

  it('mark422SameIdempotencyKeyWithAnotherBody', async () => {
    const id = markTargets.idempotent._id;
    const key = randomUUID();
    await mark(ctx.apiA, id, 'primary', { status: 'done' }, key);
    const prior = await stored(ctx.apiA, id);
    const { error } = await settle(ctx.apiA.novu.subscribers.messages.updateAsSeen({
      messageId: id, type: 'primary', subscriberId: sharedSubscriberId, markMessageActionAsSeenDto: { status: 'pending' }, idempotencyKey: key,
    }));
    const raw = ctx.apiA.last();
    assert.equal(raw.status, 422, raw.body);
    assert.equal(error?.name, 'ValidationErrorDto', `the SDK raised ${error?.name}: ${error?.message}`);
    assert.equal(error.statusCode, 422);
    assert.equal(error.message, raw.json.message);
    assert.ok(Object.keys(error.errors).length > 0, 'errors names the refused input');
    assert.deepEqual(await stored(ctx.apiA, id), prior, 'the refused request changed nothing');
  });
});
