// The records themselves: every record, full or minimal, passes @novu/api's validation,
// full records come back exactly as imported, and the SDK's parsed objects carry the
// stored values, or the empty value of their type where nothing was stored.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { ctx, ids, running } from '../lib/context.mjs';
import {
  bareTemplateRecords, fullRecords, minimalRecords, recordsA, recordsB, sparseRecords, subscribers, templates,
} from '../lib/fixture.mjs';

/** listed returns the SDK's parsed records and the raw ones for a query of environment A. */
async function listed(request) {
  const { result } = await ctx.apiA.novu.messages.retrieve({ limit: 1000, ...request });
  const raw = ctx.apiA.last().json.data;
  return { parsed: result.data, raw, byId: (id) => ({ parsed: result.data.find((m) => m.id === id), raw: raw.find((m) => m._id === id) }) };
}

/** empty asserts an optional string the record did not store is absent or "". */
const empty = (value, what) => assert.ok(value === undefined || value === '', `${what} is ${JSON.stringify(value)}`);

describe('records', () => {
  before(running);

  it('recordsEveryMessageOfBothEnvironmentsPassesTheSdk', async () => {
    const a = await ctx.apiA.novu.messages.retrieve({ limit: 1000 });
    assert.equal(a.result.data.length, recordsA.length);
    const b = await ctx.apiB.novu.messages.retrieve({ limit: 1000 });
    assert.equal(b.result.data.length, recordsB.length);
  });

  for (const record of fullRecords) {
    it(`recordFull ${record.channel} comes back as imported`, async () => {
      const { raw } = await listed({ channel: record.channel, transactionId: [record.transactionId] });
      assert.deepEqual(ids(raw), [record._id]);
      assert.deepEqual(raw[0], record);
    });
  }

  it('recordFullParsedBySdk', async () => {
    const record = fullRecords[0];
    const { parsed: m } = (await listed({ transactionId: ['txn-full'] })).byId(record._id);
    assert.ok(m, 'the full in-app record is listed');
    assert.equal(m.templateId, record._templateId);
    assert.equal(m.messageTemplateId, record._messageTemplateId);
    assert.equal(m.notificationId, record._notificationId);
    assert.equal(m.subscriberId, record._subscriberId);
    assert.equal(m.feedId, record._feedId);
    assert.deepEqual(m.deliveredAt, record.deliveredAt);
    assert.equal(m.snoozedUntil, record.snoozedUntil);
    assert.equal(m.status, record.status);

    const s = m.subscriber;
    assert.equal(s.id, subscribers.full._id);
    assert.equal(s.v, 3);
    assert.equal(s.timezone, 'Europe/Paris');
    assert.deepEqual(s.data, subscribers.full.data);
    assert.equal(s.channels[0].providerId, 'slack');
    assert.equal(s.channels[0].integrationId, subscribers.full.channels[0]._integrationId);
    assert.deepEqual(s.channels[1].credentials, subscribers.full.channels[1].credentials);

    const t = m.template;
    const want = templates.full;
    assert.equal(t.id, want._id);
    assert.equal(t.description, want.description);
    assert.equal(t.creatorId, want._creatorId);
    assert.equal(t.notificationGroupId, want._notificationGroupId);
    assert.equal(t.parentId, want._parentId);
    assert.equal(t.deletedAt, want.deletedAt);
    assert.equal(t.deletedBy, want.deletedBy);
    const { in_app: inApp, ...channels } = want.preferenceSettings;
    assert.deepEqual(t.preferenceSettings, { ...channels, inApp }, 'the SDK names in_app inApp');
    assert.deepEqual(t.steps[0].filters, want.steps[0].filters);
    assert.equal(t.steps[0].metadata.type, 'regular');
    assert.equal(t.steps[0].metadata.backoffUnit, 'seconds');
    assert.equal(t.steps[0].variants[0].metadata.type, 'backoff');
    assert.equal(t.steps[0].variants[0].filters[0].children[0].operator, 'NOT_EQUAL');
    assert.equal(t.steps[1].metadata.type, 'timed');
    assert.equal(t.steps[0].replyCallback.url, want.steps[0].replyCallback.url);
    assert.deepEqual(t.triggers, want.triggers);
    assert.equal(t.notificationGroup.id, want.notificationGroup._id);
    assert.equal(t.notificationGroup.environmentId, want.notificationGroup._environmentId);

    assert.deepEqual(m.content, record.content);
    assert.deepEqual(m.cta.action.buttons, record.cta.action.buttons);
    assert.deepEqual(m.cta.action.result, record.cta.action.result);
    assert.equal(m.cta.data.url, record.cta.data.url);
    assert.deepEqual(m.payload, record.payload);
    assert.deepEqual(m.overrides, record.overrides);
  });

  it('recordMinimalParsedBySdkWithEmptyValues', async () => {
    const { byId } = await listed({ subscriberId: 'alice' });
    for (const record of minimalRecords) {
      const { parsed: m, raw } = byId(record._id);
      assert.ok(m, `minimal ${record.channel} record is listed`);
      assert.equal(m.template, undefined, 'no template is sent when none is stored');
      assert.equal(raw.template, undefined);
      assert.equal(m.transactionId, record.transactionId ?? '');
      assert.equal(m.notificationId, record._notificationId ?? '');
      assert.equal(m.read, false);
      assert.equal(m.seen, false);
      assert.equal(m.status, 'sent');
      assert.ok(Array.isArray(m.content) ? m.content.length === 0 : (m.content ?? '') === '', `content is ${JSON.stringify(m.content)}`);
      assert.equal(m.cta.action?.status, undefined);
      assert.equal(m.cta.action?.result, undefined);
      for (const k of ['templateId', 'messageTemplateId', 'templateIdentifier', 'subject', 'email', 'phone', 'title', 'feedId', 'errorId', 'errorText', 'providerId']) {
        empty(m[k], `${record.channel}.${k}`);
      }
      const s = m.subscriber;
      assert.equal(s.subscriberId, 'alice');
      assert.equal(s.deleted, false);
      assert.equal(s.createdAt, subscribers.alice.createdAt);
      for (const k of ['firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone']) empty(s[k], `subscriber.${k}`);
      assert.ok(!s.channels?.length, 'no channels');
    }
  });

  it('recordBareTemplateParsedBySdkWithEmptyValues', async () => {
    const { byId } = await listed({ transactionId: ['txn-bare'] });
    for (const record of bareTemplateRecords) {
      const { parsed: m } = byId(record._id);
      assert.ok(m, `bare-template ${record.channel} record is listed`);
      const t = m.template;
      assert.equal(t.id, templates.bare._id);
      assert.equal(t.name, 'Bare');
      assert.equal(t.description, '');
      assert.equal(t.creatorId, '');
      assert.equal(t.notificationGroupId, '');
      assert.equal(t.deletedAt, '');
      assert.equal(t.deletedBy, '');
      assert.equal(t.active, false);
      assert.equal(t.draft, false);
      assert.equal(t.critical, false);
      assert.equal(t.deleted, false);
      assert.deepEqual(t.tags, []);
      assert.deepEqual(t.steps, []);
      assert.deepEqual(t.triggers, []);
      assert.ok(Object.values(t.preferenceSettings).every((v) => v === false), `preferenceSettings ${JSON.stringify(t.preferenceSettings)}`);
      assert.equal(t.notificationGroup, undefined);
      empty(t.parentId, 'template.parentId');
    }
  });

  it('recordSparseNestedObjectsParsedBySdkWithEmptyValues', async () => {
    const { byId } = await listed({ transactionId: ['txn-sparse'] });
    for (const record of sparseRecords) {
      const { parsed: m } = byId(record._id);
      assert.ok(m, `sparse ${record.channel} record is listed`);
      assert.deepEqual(m.content, [
        { type: 'text', content: '' },
        { type: 'button', content: '', styles: { textAlign: 'right' } },
      ], 'a block without content has content ""');
      assert.deepEqual(m.cta.action.buttons, [{ type: 'primary', content: '' }, { type: 'secondary', content: '' }],
        'a button without content has content ""');

      const [fcm, slack] = m.subscriber.channels;
      assert.equal(fcm.providerId, 'fcm');
      assert.equal(fcm.integrationId, '');
      assert.deepEqual(fcm.credentials, {});
      assert.equal(slack.integrationId, '');
      assert.deepEqual(slack.credentials, {});

      const t = m.template;
      assert.equal(t.name, 'Sparse');
      const [first, second] = t.steps;
      assert.deepEqual(first.filters, [
        { isNegated: false, type: 'BOOLEAN', value: 'AND', children: [] },
        { isNegated: false, type: 'TEXT', value: 'OR', children: [{ field: '', value: '', operator: 'EQUAL', on: 'payload' }] },
      ]);
      assert.equal(first.metadata.type, 'regular');
      assert.deepEqual(first.variants[0].filters, [{ isNegated: false, type: 'NUMBER', value: 'AND', children: [] }]);
      assert.ok(second && typeof second === 'object', 'an empty step is still a step');
      assert.deepEqual(t.triggers, [{ type: 'event', identifier: 'sparse', variables: [] }]);
      assert.equal(t.notificationGroup.id, templates.sparse.notificationGroup._id);
      assert.equal(t.notificationGroup.name, 'Sparse group');
      assert.equal(t.notificationGroup.environmentId, '');
      assert.equal(t.notificationGroup.organizationId, '');
    }
  });
});
