// Every 4xx @novu/api can provoke, and how it surfaces them: the server's error body must
// parse with the SDK's own error schemas (ErrorDto; ValidationErrorDto, which requires
// `errors`, for 422) so callers get the typed error with the server's status and message.
// Input the SDK refuses itself never reaches the server.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { ErrorDto, SDKValidationError, ValidationErrorDto } from '@novu/api/models/errors/index.js';

import { apiClient, settle } from '../lib/clients.mjs';
import { ctx, running } from '../lib/context.mjs';
import { aliceMessage, markTargets, sharedSubscriberId, unknownMessageId } from '../lib/fixture.mjs';

/** refused runs an SDK call that must fail with `status` as an instance of `type`. */
async function refused(api, call, status, type) {
  const sent = api.exchanges.length;
  const { value, error } = await settle(call(api.novu));
  assert.equal(value, undefined, `expected ${status}, the SDK returned a value`);
  assert.equal(api.exchanges.length, sent + 1, 'one request reached the server');
  const raw = api.last();
  assert.equal(raw.status, status, raw.body);
  assert.ok(error instanceof type, `the SDK raised ${error?.name} (${error?.message}), not ${type.name}; body: ${raw.body}`);
  assert.equal(error.statusCode, status);
  assert.equal(error.body, raw.body);
  assert.equal(typeof raw.json.message, 'string');
  assert.equal(error.message, raw.json.message, 'the SDK shows the server\'s message');
  assert.equal(error.data$.statusCode, status);
  assert.equal(error.path, raw.json.path);
  assert.equal(typeof error.timestamp, 'string');
  return { error, raw };
}

/** invalid runs an SDK call that must fail validation of the named input field with 422. */
async function invalid(api, call, field) {
  const { error } = await refused(api, call, 422, ValidationErrorDto);
  assert.ok(error.errors[field]?.messages?.length > 0, `errors.${field} explains the refusal: ${JSON.stringify(error.errors)}`);
  return error;
}

/** notSent runs an SDK call whose input the SDK itself must refuse, sending nothing. */
async function notSent(api, call) {
  const sent = api.exchanges.length;
  const { error } = await settle(call(api.novu));
  assert.ok(error instanceof SDKValidationError && error.name === 'SDKValidationError', `the SDK raised ${error?.name}: ${error?.message}`);
  assert.equal(api.exchanges.length, sent, 'nothing was sent');
}

const markAs = (subscriberId, messageId, extra = {}) => (novu) => novu.subscribers.messages.updateAsSeen({
  subscriberId, messageId, type: 'primary', markMessageActionAsSeenDto: { status: 'done' }, ...extra,
});

describe('@novu/api errors', () => {
  before(running);

  it('api401UnknownKey', async () => {
    await refused(apiClient(ctx.url, 'f'.repeat(64)), (n) => n.messages.retrieve({}), 401, ErrorDto);
  });

  it('api401RevokedKey', async () => {
    await refused(apiClient(ctx.url, ctx.revokedKey), (n) => n.messages.retrieve({}), 401, ErrorDto);
  });

  it('api401MalformedKey', async () => {
    await refused(apiClient(ctx.url, 'two words'), (n) => n.messages.retrieve({}), 401, ErrorDto);
  });

  it('api401KeyThatIsOnlyTheScheme', async () => {
    // The SDK prefixes "ApiKey " only to keys not containing "ApiKey": this one is sent bare.
    await refused(apiClient(ctx.url, 'ApiKey'), (n) => n.messages.retrieve({}), 401, ErrorDto);
  });

  it('api401MarkWithUnknownKey', async () => {
    await refused(apiClient(ctx.url, 'f'.repeat(64)), markAs(sharedSubscriberId, markTargets.api._id), 401, ErrorDto);
  });

  it('api404MarkUnknownMessage', async () => {
    await refused(ctx.apiA, markAs(sharedSubscriberId, unknownMessageId), 404, ErrorDto);
  });

  it('api404MarkMalformedMessageId', async () => {
    await refused(ctx.apiA, markAs(sharedSubscriberId, 'not-a-message-id'), 404, ErrorDto);
  });

  it('api404MarkAnotherSubscribersMessage', async () => {
    await refused(ctx.apiA, markAs(sharedSubscriberId, aliceMessage._id), 404, ErrorDto);
  });

  it('api404MarkUnknownSubscriber', async () => {
    await refused(ctx.apiA, markAs('nobody-at-all', markTargets.api._id), 404, ErrorDto);
  });

  it('api422Limit0', async () => {
    await invalid(ctx.apiA, (n) => n.messages.retrieve({ limit: 0 }), 'limit');
  });

  it('api422Limit1001', async () => {
    await invalid(ctx.apiA, (n) => n.messages.retrieve({ limit: 1001 }), 'limit');
  });

  it('api422PageMinus1', async () => {
    await invalid(ctx.apiA, (n) => n.messages.retrieve({ page: -1 }), 'page');
  });

  it('api422PageFraction', async () => {
    await invalid(ctx.apiA, (n) => n.messages.retrieve({ page: 1.5 }), 'page');
  });

  it('api422TooManyTransactionIds', async () => {
    const transactionId = Array.from({ length: 101 }, (_, i) => `t${i}`);
    await invalid(ctx.apiA, (n) => n.messages.retrieve({ transactionId }), 'transactionId');
  });

  it('api422MarkUnknownButtonType', async () => {
    await invalid(ctx.apiA, markAs(sharedSubscriberId, markTargets.api._id, { type: 'tertiary' }), 'type');
  });

  it('apiMarkBadStatusIsRefusedByTheSdk', async () => {
    await notSent(ctx.apiA, (n) => n.subscribers.messages.updateAsSeen({
      subscriberId: sharedSubscriberId, messageId: markTargets.api._id, type: 'primary', markMessageActionAsSeenDto: { status: 'finished' },
    }));
  });

  it('apiListUnknownChannelIsRefusedByTheSdk', async () => {
    await notSent(ctx.apiA, (n) => n.messages.retrieve({ channel: 'fax' }));
  });
});
