// The data the suite loads: two environments of two organizations sharing an external
// subscriberId, messages on every channel, full records (every field of the contract
// filled) and minimal ones (nothing optional stored), in the server's import format
// (one Message record per line, subscriber and template embedded). Every enumerated value
// is one the published TypeScript SDK's closed enums accept.

/** id returns a 24-hex id: a 4-hex tag, then n in hex. */
const id = (tag, n) => tag + n.toString(16).padStart(20, '0');

export const orgA = id('6a00', 0xa);
export const envA = id('6a00', 0xe1);
export const orgB = id('6b00', 0xb);
export const envB = id('6b00', 0xe2);

const t0 = Date.parse('2025-03-01T08:00:00.000Z');
/** at is a timestamp s seconds (and ms milliseconds) after t0, as the server writes them. */
const at = (s, ms = 0) => new Date(t0 + s * 1000 + ms).toISOString();
// A snooze that has not ended: the server ends snoozes whose time has passed (it clears
// snoozedUntil within a second), so a record that keeps its snooze must snooze into the future.
const snoozeEnd = Date.parse('2099-03-01T10:00:00.000Z');
const until = (ms) => new Date(snoozeEnd + ms).toISOString();

/** The external id both environments give one of their subscribers. */
export const sharedSubscriberId = 'shared-user';

// Subscribers. "full" fills every field of the contract; "bare" only what the import needs.
const subscriberFull = {
  _id: id('5a00', 1),
  firstName: 'Zoë', lastName: 'Ng', email: 'zoe@example.com', phone: '+15550100', avatar: 'https://cdn.example.com/a.png', locale: 'fr-FR',
  channels: [
    {
      providerId: 'slack', integrationIdentifier: 'slack-main', _integrationId: id('1a00', 1),
      credentials: {
        webhookUrl: 'https://hooks.example.com/T1', channel: '#general', deviceTokens: ['slack-token'], alertUid: 'alert-1',
        title: 'Alerts', imageUrl: 'https://cdn.example.com/i.png', state: 'open', externalUrl: 'https://example.com/ext',
      },
    },
    {
      providerId: 'fcm', integrationIdentifier: 'fcm-main', _integrationId: id('1a00', 2),
      credentials: {
        webhookUrl: 'https://push.example.com', channel: 'push', deviceTokens: ['tok-1', 'tok-2'], alertUid: 'alert-2',
        title: 'Push', imageUrl: 'https://cdn.example.com/p.png', state: 'active', externalUrl: 'https://example.com/p',
      },
    },
  ],
  topics: ['news', 'billing'], isOnline: true, lastOnlineAt: at(-3600), __v: 3,
  data: { plan: 'pro', seats: 12, nested: { tags: ['a', 'b'], ok: true, none: null } },
  timezone: 'Europe/Paris', subscriberId: sharedSubscriberId, _organizationId: orgA, _environmentId: envA,
  deleted: false, createdAt: at(-86400), updatedAt: at(-7200),
};
const bare = (n, subscriberId, env, org) => ({
  _id: id(env === envA ? '5a00' : '5b00', n), subscriberId, _organizationId: org, _environmentId: env,
  deleted: false, createdAt: at(-86400), updatedAt: at(-86400),
});
const subscriberAlice = bare(2, 'alice', envA, orgA);
const subscriberBob = { ...bare(3, 'bob', envA, orgA), firstName: 'Bob', __v: 1 };
const subscriberZoe = { ...bare(4, 'zoë+ü/ok', envA, orgA), email: 'zoe2@example.com' };
// Nested objects present but holding only the values the SDK's closed enums need.
const subscriberSparse = {
  ...bare(5, 'sparse', envA, orgA),
  channels: [{ providerId: 'fcm' }, { providerId: 'slack', credentials: {} }],
};
const subscriberSharedB = { ...bare(1, sharedSubscriberId, envB, orgB), firstName: 'Other tenant' };
const subscriberCarol = bare(2, 'carol', envB, orgB);
// The subscriber the read and seen marks change (suites/marks.mjs), in both environments.
export const marksSubscriberId = 'marks-user';
const subscriberMarksA = bare(9, marksSubscriberId, envA, orgA);
const subscriberMarksB = bare(9, marksSubscriberId, envB, orgB);

export const subscribers = { full: subscriberFull, alice: subscriberAlice, bob: subscriberBob, zoe: subscriberZoe, sparse: subscriberSparse };

// Templates.
const step = (n, extra) => ({
  _id: id('57e0', n), uuid: `0b6f${n}c1e-3a5b-4c9d-8e7f-00000000000${n}`, name: `Step ${n}`, _templateId: id('3e00', n),
  active: true, shouldStopOnFail: false,
  template: { subject: 'Hi {{firstName}}', content: '<b>&amp;</b>', nested: { n: 1.5, list: [1, 'two'] } },
  filters: [{
    isNegated: false, type: 'BOOLEAN', value: 'AND',
    children: [
      { field: 'plan', value: 'pro', operator: 'EQUAL', on: 'subscriber' },
      { field: 'count', value: '3', operator: 'LARGER', on: 'payload' },
    ],
  }],
  _parentId: id('57e0', 0xff),
  metadata: { amount: 5, unit: 'minutes', digestKey: 'postId', type: 'regular', backoff: true, backoffAmount: 2, backoffUnit: 'seconds', updateMode: false },
  replyCallback: { active: true, url: 'https://example.com/reply' },
  ...extra,
});
/** variant is a step without variants, with other metadata and filters. */
const variant = (n) => step(n, {
  metadata: { amount: 1, unit: 'hours', digestKey: 'thread', type: 'backoff', backoff: false, backoffAmount: 10, backoffUnit: 'minutes', updateMode: true },
  filters: [{ isNegated: true, type: 'TEXT', value: 'OR', children: [{ field: 'country', value: 'FR', operator: 'NOT_EQUAL', on: 'subscriber' }] }],
});
const templateFull = {
  _id: id('7a00', 1), name: 'Welcome', description: 'Sent after sign-up', active: true, draft: false,
  preferenceSettings: { email: true, sms: false, in_app: true, chat: false, push: true },
  critical: true, tags: ['onboarding', 'vip'],
  steps: [
    step(1, { variants: [variant(2)] }),
    step(3, { metadata: { amount: 1, unit: 'days', digestKey: 'day', type: 'timed' }, variants: [variant(4)] }),
  ],
  _organizationId: orgA, _creatorId: id('c0de', 1), _environmentId: envA,
  triggers: [{ type: 'event', identifier: 'welcome', variables: [{ name: 'firstName' }, { name: 'plan' }], subscriberVariables: [{ name: 'email' }] }],
  _notificationGroupId: id('9a00', 1), _parentId: id('7a00', 0xff), deleted: false,
  deletedAt: at(-600), deletedBy: id('c0de', 2),
  notificationGroup: { _id: id('9a00', 1), name: 'General', _environmentId: envA, _organizationId: orgA, _parentId: id('9a00', 0xff) },
  data: { owner: 'growth', weight: 0.25 },
  workflowIntegrationStatus: { hasActiveIntegrations: true, channels: { in_app: { hasActiveIntegrations: true } } },
};
const templateBare = { _id: id('7a00', 2), name: 'Bare', _environmentId: envA, _organizationId: orgA };
const templateSparse = {
  _id: id('7a00', 3), name: 'Sparse', _environmentId: envA, _organizationId: orgA,
  steps: [
    {
      filters: [{ type: 'BOOLEAN', value: 'AND' }, { type: 'TEXT', value: 'OR', children: [{ operator: 'EQUAL', on: 'payload' }] }],
      metadata: { type: 'regular' },
      variants: [{ filters: [{ type: 'NUMBER', value: 'AND' }] }],
    },
    {},
  ],
  triggers: [{ type: 'event', identifier: 'sparse' }],
  notificationGroup: { _id: id('9a00', 2), name: 'Sparse group' },
};
const templateB = { _id: id('7b00', 1), name: 'Other tenant', _environmentId: envB, _organizationId: orgB };

export const templates = { full: templateFull, bare: templateBare, sparse: templateSparse };

// Messages.
const channels = ['in_app', 'email', 'sms', 'chat', 'push'];
const buttons = [
  { type: 'primary', content: 'Accept', resultContent: 'Accepted' },
  { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
];

/** full fills every field of the contract. */
function full(n, channel, createdAt, extra = {}) {
  return {
    _id: id('ae00', n), _templateId: templateFull._id, _environmentId: envA, _messageTemplateId: id('3e00', 1),
    _organizationId: orgA, _notificationId: id('4e00', n), _subscriberId: subscriberFull._id,
    subscriber: subscriberFull, template: templateFull, templateIdentifier: 'welcome', createdAt,
    deliveredAt: [createdAt, at(1, n)], lastSeenDate: at(2, n), lastReadDate: at(3, n),
    content: [
      { type: 'text', content: 'Hello <b>Zoë</b> & co', url: 'https://example.com/t', styles: { textAlign: 'left' } },
      { type: 'button', content: 'Open', url: 'https://example.com/b', styles: { textAlign: 'center' } },
    ],
    transactionId: 'txn-full', subject: 'Welcome aboard ✓', channel, read: true, seen: true, snoozedUntil: until(n),
    email: 'zoe@example.com', phone: '+15550100', directWebhookUrl: 'https://hooks.example.com/direct', providerId: 'sendgrid',
    deviceTokens: ['tok-1', 'tok-2'], title: 'Welcome',
    cta: {
      type: 'redirect', data: { url: 'https://example.com/cta' },
      action: { status: 'pending', buttons, result: { payload: { earlier: 'choice', n: 1 }, type: 'secondary' } },
    },
    _feedId: id('fe00', 1), status: n % 2 ? 'sent' : 'warning', errorId: 'E_PROVIDER', errorText: 'provider said: slow down',
    payload: { html: '<b>&</b>', count: 3, big: 12345678901234, list: [1, 2.5, 'x', null], deep: { a: { b: { c: [] } } } },
    overrides: { email: { from: 'no-reply@example.com' }, fcm: { ttl: 60 } },
    ...extra,
  };
}

/**
 * minimal stores nothing optional: no template, the bare subscriber, no content or cta.
 * With bareIds it also leaves out _notificationId and transactionId.
 */
function minimal(n, channel, createdAt, bareIds = false) {
  const m = {
    _id: id('ae00', n), _environmentId: envA, _organizationId: orgA, _subscriberId: subscriberAlice._id,
    subscriber: subscriberAlice, createdAt, channel, read: false, seen: false, status: 'sent',
  };
  if (!bareIds) Object.assign(m, { _notificationId: id('4e00', n), transactionId: 'txn-min' });
  return m;
}

/** plain is an ordinary message of some subscriber, with or without a template and buttons. */
function plain(n, channel, createdAt, sub, tpl, transactionId, env = envA, org = orgA) {
  const m = {
    _id: id(env === envA ? 'ae00' : 'be00', n), _environmentId: env, _organizationId: org, _notificationId: id('4e00', n),
    _subscriberId: sub._id, subscriber: sub, createdAt, transactionId, channel, read: n % 3 === 0, seen: n % 2 === 0,
    status: 'sent', content: [], cta: {},
    payload: { n },
  };
  if (tpl) Object.assign(m, { _templateId: tpl._id, template: tpl });
  if (tpl === templateFull) m.templateIdentifier = 'welcome';
  if (channel === 'in_app') m.cta = { type: 'redirect', data: { url: `https://example.com/m/${n}` }, action: { status: 'pending', buttons } };
  return m;
}

const messagesA = [];
// Full records, one per channel.
channels.forEach((c, i) => messagesA.push(full(1 + i, c, at(100 + i))));
// Minimal records, one per channel; two without _notificationId and transactionId.
channels.forEach((c, i) => messagesA.push(minimal(0x10 + i, c, at(200 + i), i >= 3)));
// Records with a bare template, one per channel.
channels.forEach((c, i) => messagesA.push(plain(0x20 + i, c, at(300 + i), subscriberBob, templateBare, 'txn-bare')));
// Sparse records: content blocks, buttons, subscriber channels, steps, filters and a
// notification group that hold nothing beyond their enumerated values.
channels.forEach((c, i) => messagesA.push({
  ...plain(0x30 + i, c, at(250 + i), subscriberSparse, templateSparse, 'txn-sparse'),
  content: [{ type: 'text' }, { type: 'button', styles: { textAlign: 'right' } }],
  cta: { action: { buttons: [{ type: 'primary' }, { type: 'secondary' }] } },
}));
// Ordinary messages: every channel, four subscribers, three templates (none, bare, full),
// four transaction ids; every third group of three shares one createdAt, to exercise
// the _id tie-break.
const subs = [subscriberFull, subscriberAlice, subscriberBob, subscriberZoe];
const tpls = [null, templateBare, templateFull];
for (let i = 0; i < 30; i++) {
  const second = i % 9 < 3 ? 400 + Math.floor(i / 9) : 400 + i * 7;
  messagesA.push(plain(0x40 + i, channels[i % 5], at(second, i % 9 < 3 ? 0 : i), subs[i % 4], tpls[i % 3], `txn-${i % 4}`));
}
// Messages the call-to-action tests mark: in-app, with buttons, of the shared subscriber.
export const markTargets = {};
for (const [name, n] of [['api', 0x80], ['apiPayload', 0x81], ['idempotent', 0x82], ['node', 0x83], ['tenancy', 0x84], ['repeat', 0x85]]) {
  const m = plain(n, 'in_app', at(50 + (n & 0xf)), subscriberFull, templateFull, 'txn-mark');
  if (name === 'apiPayload') m.cta.action.result = { type: 'secondary', payload: { earlier: 'yes', n: [1] } };
  messagesA.push(m);
  markTargets[name] = m;
}
// The messages of the read and seen marks: four in-app messages of marks-user in A and
// three of other channels (which keep the last page of 7 full), two in-app of B's
// marks-user; all unread and unseen.
const unmarked = (m) => Object.assign(m, { read: false, seen: false });
export const marksA = [0x90, 0x91, 0x92, 0x93].map((n) => unmarked(plain(n, 'in_app', at(60 + (n & 0xf)), subscriberMarksA, templateBare, 'txn-marks')));
export const marksOtherA = ['email', 'sms', 'push'].map((c, i) => unmarked(plain(0x94 + i, c, at(65 + i), subscriberMarksA, templateBare, 'txn-marks')));
messagesA.push(...marksA, ...marksOtherA);
// A minimal record's id, and one of another subscriber (alice) for the 404 checks.
export const aliceMessage = messagesA.find((m) => m.subscriber === subscriberAlice);

const messagesB = [];
channels.forEach((c, i) => messagesB.push(plain(0x10 + i, c, at(150 + i), i % 2 ? subscriberCarol : subscriberSharedB, i % 2 ? null : templateB, i < 3 ? 'txn-1' : 'txn-b', envB, orgB)));
messagesB.push(plain(0x20, 'in_app', at(160), subscriberSharedB, templateB, 'txn-mark', envB, orgB));
export const marksB = [0x30, 0x31].map((n) => unmarked(plain(n, 'in_app', at(170 + (n & 0xf)), subscriberMarksB, templateB, 'txn-marks', envB, orgB)));
messagesB.push(...marksB);

/** Every record, in the order the import file carries them. */
export const records = [...messagesA, ...messagesB];
export const recordsA = messagesA;
export const recordsB = messagesB;
export const fullRecords = messagesA.slice(0, 5);
export const minimalRecords = messagesA.slice(5, 10);
export const bareTemplateRecords = messagesA.slice(10, 15);
export const sparseRecords = messagesA.slice(15, 20);

/** newestFirst orders records as the list does: createdAt descending, ties by _id descending. */
export function newestFirst(list) {
  return [...list].sort((a, b) => (a.createdAt === b.createdAt ? (a._id < b._id ? 1 : -1) : (a.createdAt < b.createdAt ? 1 : -1)));
}

/** select returns env A's records matching a list filter, newest first. */
export function select({ channel, subscriberId, transactionId } = {}, list = messagesA) {
  const ids = transactionId && (Array.isArray(transactionId) ? transactionId : [transactionId]);
  return newestFirst(list.filter((m) => (!channel || m.channel === channel)
    && (!subscriberId || m.subscriber.subscriberId === subscriberId)
    && (!ids || ids.includes(m.transactionId))));
}

/** An id no record has. */
export const unknownMessageId = id('dead', 0xbeef);
