// Deleting messages through both SDKs: @novu/api's messages.delete (DELETE
// /v1/messages/{messageId}) and messages.deleteByTransactionId (DELETE
// /v1/messages/transaction/{transactionId}?channel=), @novu/node's messages.deleteById and
// deleteByTransactionId, on both environments. Every delete is read back through GraphQL,
// and every refusal changes nothing in either environment. It runs last: the messages
// it deletes are the marks suite's and the fixture's.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { ErrorDto } from '@novu/api/models/errors/index.js';

import { settle } from '../lib/clients.mjs';
import { ctx, running } from '../lib/context.mjs';
import { aliceMessage, marksA, marksB, marksOtherA, recordsA, recordsB, unknownMessageId } from '../lib/fixture.mjs';

/** stored lists the _ids of every message of key's environment, through GraphQL. */
async function stored(key) {
  const res = await fetch(`${ctx.url}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `ApiKey ${key}` },
    body: JSON.stringify({ query: '{ messages(limit: 1000) { data { _id } } }' }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return new Set(body.data.messages.data.map((m) => m._id));
}

/** both reads what both environments store. */
const both = async () => [await stored(ctx.keyA), await stored(ctx.keyB)];

/** refusedBy runs an SDK call that must fail with 404 ErrorDto, changing neither environment. */
async function refusedBy(api, call) {
  const before = await both();
  const { value, error } = await settle(call(api.novu));
  assert.equal(value, undefined, 'expected 404, the SDK returned a value');
  assert.equal(api.last().status, 404, api.last().body);
  assert.ok(error instanceof ErrorDto, `the SDK raised ${error?.name} (${error?.message}), not ErrorDto`);
  assert.equal(error.statusCode, 404);
  assert.deepEqual(await both(), before, 'a refusal changes nothing');
}

describe('deletes', () => {
  before(running);

  it('delete0StartsWithEveryMessage', async () => {
    const [a, b] = await both();
    assert.equal(a.size, recordsA.length);
    assert.equal(b.size, recordsB.length);
  });

  it('delete200AnswersAcknowledgedAndTheMessageIsGone', async () => {
    const m = marksOtherA[0];
    const { result } = await ctx.apiA.novu.messages.delete(m._id);
    const raw = ctx.apiA.last();
    assert.equal(raw.status, 200, raw.body);
    assert.equal(raw.method, 'DELETE');
    assert.deepEqual(result, { acknowledged: true, status: 'deleted' });
    const [a, b] = await both();
    assert.equal(a.has(m._id), false);
    assert.equal(a.size, recordsA.length - 1);
    assert.equal(b.size, recordsB.length);
  });

  it('delete404Again', async () => {
    await refusedBy(ctx.apiA, (novu) => novu.messages.delete(marksOtherA[0]._id));
  });

  it('delete404AnotherTenantsMessage', async () => {
    await refusedBy(ctx.apiB, (novu) => novu.messages.delete(marksA[0]._id));
  });

  it('delete404UnknownId', async () => {
    await refusedBy(ctx.apiA, (novu) => novu.messages.delete(unknownMessageId));
  });

  it('deleteByTransactionId204OneChannelOfOneTenant', async () => {
    const beforeA = await stored(ctx.keyA);
    const result = await ctx.apiB.novu.messages.deleteByTransactionId('txn-marks', 'in_app');
    const raw = ctx.apiB.last();
    assert.equal(raw.status, 204, raw.body);
    assert.ok(raw.url.endsWith('/v1/messages/transaction/txn-marks?channel=in_app'), raw.url);
    assert.equal(result?.result, undefined);
    const b = await stored(ctx.keyB);
    assert.ok(marksB.every((m) => !b.has(m._id)), 'B\'s in-app messages of txn-marks are gone');
    assert.equal(b.size, recordsB.length - marksB.length);
    assert.deepEqual(await stored(ctx.keyA), beforeA, 'A\'s messages of the same transaction id are kept');
  });

  it('deleteByTransactionId404NoneLeft', async () => {
    await refusedBy(ctx.apiB, (novu) => novu.messages.deleteByTransactionId('txn-marks'));
    await refusedBy(ctx.apiA, (novu) => novu.messages.deleteByTransactionId('txn-marks', 'email'));
    await refusedBy(ctx.apiA, (novu) => novu.messages.deleteByTransactionId('no-such-transaction'));
  });

  it('deleteByTransactionId204EveryChannel', async () => {
    await ctx.apiA.novu.messages.deleteByTransactionId('txn-marks');
    assert.equal(ctx.apiA.last().status, 204);
    const a = await stored(ctx.keyA);
    assert.ok([...marksA, ...marksOtherA].every((m) => !a.has(m._id)));
    assert.equal(a.size, recordsA.length - marksA.length - marksOtherA.length);
  });

  it('nodeDeleteById200', async () => {
    const res = await ctx.nodeA.novu.messages.deleteById(aliceMessage._id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.data, { data: { acknowledged: true, status: 'deleted' } });
    assert.equal((await stored(ctx.keyA)).has(aliceMessage._id), false);
    const again = await settle(ctx.nodeA.novu.messages.deleteById(aliceMessage._id));
    assert.equal(again.error?.response?.status, 404);
  });

  it('nodeDeleteByTransactionId204', async () => {
    const txn = recordsB.find((m) => m.transactionId === 'txn-b');
    const res = await ctx.nodeB.novu.messages.deleteByTransactionId('txn-b');
    assert.equal(res.status, 204);
    const b = await stored(ctx.keyB);
    assert.ok(recordsB.filter((m) => m.transactionId === 'txn-b').every((m) => !b.has(m._id)), `${txn._id} and the rest of txn-b are gone`);
    const nodeError = await settle(ctx.nodeA.novu.messages.deleteByTransactionId('txn-b'));
    assert.equal(nodeError.error?.response?.status, 404, 'A has no txn-b');
  });
});
