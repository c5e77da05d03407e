// Tenancy: the key decides the environment. Environment B's key, through either SDK,
// sees none of A's messages, even under the subscriberId and transactionId both share,
// and its marks of A's messages are 404s that change nothing.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { ErrorDto } from '@novu/api/models/errors/index.js';

import { settle } from '../lib/clients.mjs';
import { ctx, ids, running } from '../lib/context.mjs';
import { envA, envB, markTargets, newestFirst, recordsA, recordsB, sharedSubscriberId } from '../lib/fixture.mjs';
import { stored } from './mark.mjs';

/** listB lists as environment B and checks the answer holds exactly B's matching records. */
async function listB(request, match) {
  const { result } = await ctx.apiB.novu.messages.retrieve({ ...request, limit: 100 });
  const want = newestFirst(recordsB.filter(match));
  assert.deepEqual(ids(result.data), ids(want));
  assert.equal(result.totalCount, want.length);
  for (const m of result.data) {
    assert.equal(m.environmentId, envB);
    assert.equal(m.subscriber?.environmentId, envB);
  }
  return result;
}

describe('tenancy', () => {
  before(running);

  it('tenancyListAllSeesOnlyItsOwn', async () => {
    await listB({}, () => true);
  });

  it('tenancyListSharedSubscriberIdSeesOnlyItsOwn', async () => {
    const result = await listB({ subscriberId: sharedSubscriberId }, (m) => m.subscriber.subscriberId === sharedSubscriberId);
    assert.ok(result.data.length > 0, 'B has messages of its own shared-user');
  });

  it('tenancyListSharedTransactionIdSeesOnlyItsOwn', async () => {
    await listB({ transactionId: ['txn-1', 'txn-mark', 'txn-full'] }, (m) => ['txn-1', 'txn-mark', 'txn-full'].includes(m.transactionId));
  });

  it('tenancyListOfASeesNoneOfB', async () => {
    const { result } = await ctx.apiA.novu.messages.retrieve({ limit: 1000 });
    assert.equal(result.totalCount, recordsA.length);
    assert.ok(result.data.every((m) => m.environmentId === envA));
  });

  it('tenancyNodeListSeesOnlyItsOwn', async () => {
    const res = await ctx.nodeB.novu.messages.list({ subscriberId: sharedSubscriberId, limit: 100 });
    assert.ok(res.data.data.length > 0);
    assert.ok(res.data.data.every((m) => m._environmentId === envB && m.subscriber._environmentId === envB));
  });

  it('tenancyMark404ForAnotherTenantsMessage', async () => {
    const id = markTargets.tenancy._id;
    const prior = await stored(ctx.apiA, id);
    const { error } = await settle(ctx.apiB.novu.subscribers.messages.updateAsSeen({
      subscriberId: sharedSubscriberId, messageId: id, type: 'primary', markMessageActionAsSeenDto: { status: 'done', payload: { x: 1 } },
    }));
    assert.equal(ctx.apiB.last().status, 404, ctx.apiB.last().body);
    assert.ok(error instanceof ErrorDto, `the SDK raised ${error?.name}: ${error?.message}`);
    assert.equal(error.statusCode, 404);
    assert.deepEqual(await stored(ctx.apiA, id), prior, 'the message is unchanged');
  });

  it('tenancyNodeMark404ForAnotherTenantsMessage', async () => {
    const id = markTargets.tenancy._id;
    const prior = await stored(ctx.apiA, id);
    const { error } = await settle(ctx.nodeB.novu.subscribers.markMessageActionSeen(sharedSubscriberId, id, 'secondary', { status: 'done', payload: { x: 1 } }));
    assert.equal(error?.response?.status, 404);
    assert.equal(error.response.data.statusCode, 404);
    assert.deepEqual(await stored(ctx.apiA, id), prior, 'the message is unchanged');
  });

  it('tenancyNotFoundLooksLikeMissing', async () => {
    // Another tenant's message answers exactly like an id nobody has, save path and time.
    const strip = ({ timestamp, path, ...rest }) => rest;
    await settle(ctx.apiB.novu.subscribers.messages.updateAsSeen({
      subscriberId: sharedSubscriberId, messageId: markTargets.tenancy._id, type: 'primary', markMessageActionAsSeenDto: { status: 'done' },
    }));
    const theirs = ctx.apiB.last();
    await settle(ctx.apiB.novu.subscribers.messages.updateAsSeen({
      subscriberId: sharedSubscriberId, messageId: 'ffffffffffffffffffffffff', type: 'primary', markMessageActionAsSeenDto: { status: 'done' },
    }));
    const missing = ctx.apiB.last();
    assert.equal(theirs.status, 404);
    assert.equal(missing.status, 404);
    assert.deepEqual(strip(theirs.json), strip(missing.json));
  });
});
