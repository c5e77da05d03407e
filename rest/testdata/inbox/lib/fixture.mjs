// The data the suite loads, in the server's import format: two environments of two
// organizations that both have a subscriber "shared-user". Environment A's has 130
// in-app messages (every tenth read), so counts pass 100, and two emails the inbox must
// not show; A's "alice" has two in-app messages; B's "shared-user" has four.

const id = (tag, n) => tag + n.toString(16).padStart(20, '0');

export const envA = id('6a00', 0xe1);
const orgA = id('6a00', 0xa);
export const envB = id('6b00', 0xe2);
const orgB = id('6b00', 0xb);
export const shared = 'shared-user';

const t0 = Date.parse('2025-03-01T08:00:00.000Z');
const at = (s) => new Date(t0 + s * 1000).toISOString();

const subscriber = (tag, n, subscriberId, env, org, extra = {}) => ({
  _id: id(tag, n), subscriberId, _organizationId: org, _environmentId: env, deleted: false,
  createdAt: at(-86400), updatedAt: at(-86400), ...extra,
});
export const sharedA = subscriber('5a00', 1, shared, envA, orgA,
  { firstName: 'Zoë', lastName: 'Ng', email: 'zoe@example.com', avatar: 'https://cdn.example.com/z.png', locale: 'fr-FR', timezone: 'Europe/Paris', data: { plan: 'pro' } });
const alice = subscriber('5a00', 2, 'alice', envA, orgA);
const sharedB = subscriber('5b00', 1, shared, envB, orgB, { firstName: 'Other tenant' });

const template = (tag, n, name, identifier, env, org, extra = {}) => ({
  _id: id(tag, n), name, active: true, draft: false, critical: false, tags: [], steps: [],
  triggers: [{ type: 'event', identifier, variables: [] }], _environmentId: env, _organizationId: org, deleted: false, ...extra,
});
export const welcome = template('7a00', 1, 'Welcome', 'welcome', envA, orgA,
  { tags: ['onboarding'], preferenceSettings: { email: true, sms: false, in_app: true, chat: false, push: false } });
export const security = template('7a00', 2, 'Security alert', 'security-alert', envA, orgA, { critical: true, tags: ['security'] });
const templateB = template('7b00', 1, 'Their workflow', 'theirs', envB, orgB);

const buttons = [
  { type: 'primary', content: 'Accept', resultContent: 'Accepted' },
  { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
];

function message(tag, n, sub, tpl, env, org, createdAt, extra = {}) {
  return {
    _id: id(tag, n), _environmentId: env, _organizationId: org, _notificationId: id('4e00', n), _subscriberId: sub._id,
    subscriber: sub, _templateId: tpl._id, template: tpl, templateIdentifier: tpl.triggers[0].identifier,
    createdAt, deliveredAt: [createdAt], transactionId: `txn-${tag}-${n}`, subject: `Subject ${n}`, channel: 'in_app',
    read: false, seen: false, status: 'sent',
    content: [{ type: 'text', content: `Message ${n}` }],
    cta: { type: 'redirect', data: { url: `https://example.com/m/${n}` }, action: { status: 'pending', buttons } },
    ...extra,
  };
}

/** severityOf is message n's severity: of every ten, one high, one medium, one low, one
 * none spelled out; the rest (the read ones among them) have none. */
const severityOf = (n) => ({ 1: { severity: 'high' }, 2: { severity: 'medium' }, 3: { severity: 'low' }, 4: { severity: 'none' } })[n % 10] ?? {};

/** A's shared-user in-app messages, newest first (later n is newer). */
export const inboxA = [];
for (let n = 0; n < 130; n++) {
  inboxA.unshift(message('ae00', n, sharedA, n % 2 ? welcome : security, envA, orgA, at(n), { read: n % 10 === 0, ...severityOf(n) }));
}
export const emailsA = [0x200, 0x201].map((n) => message('ae00', n, sharedA, welcome, envA, orgA, at(n), { channel: 'email' }));
export const aliceA = [0x300, 0x301].map((n) => message('ae00', n, alice, welcome, envA, orgA, at(n)));
export const inboxB = [];
for (let n = 0; n < 4; n++) inboxB.unshift(message('be00', n, sharedB, templateB, envB, orgB, at(n)));

export const records = [...inboxA, ...emailsA, ...aliceA, ...inboxB];

/** unreadA is how many of A's shared-user in-app messages are unread at load. */
export const unreadA = inboxA.filter((m) => !m.read).length;

/** severity is a record's severity as the client sees it: none when it has none. */
export const severity = (m) => m.severity ?? 'none';

/** unreadBySeverityA is unreadA by severity, as the client's unreadCount.severity. */
export const unreadBySeverityA = Object.fromEntries(['high', 'medium', 'low', 'none']
  .map((s) => [s, inboxA.filter((m) => !m.read && severity(m) === s).length]));

/** The subscriber of A whose inbox is large: bulkInbox(n) is n unread in-app messages of hers. */
export const bulkUser = 'bulk-user';
const bulkSubscriber = subscriber('5a00', 3, bulkUser, envA, orgA);
export function bulkInbox(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(message('af00', i, bulkSubscriber, welcome, envA, orgA, at(i), { cta: undefined }));
  }
  return out;
}
