// What the tests of the live inbox (/inbox) share: reading the page's list and badge, and
// asking the server, with the demo API key as a backend would, what the page should show.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

/** The selector of a listed message's item. */
export const row = (id) => `[data-testid="message"][data-id="${id}"]`;

/** rows reads the listed messages, top to bottom, as the page marks them up. */
export const rows = (page) => page.locator('[data-testid="message"]').evaluateAll((lis) => lis.map((li) => ({
  id: li.dataset.id, channel: li.dataset.channel, read: li.dataset.read, seen: li.dataset.seen,
  archived: li.dataset.archived, status: li.dataset.status,
})));

/** badge reads the unread badge: its number and its accessible label. */
export const badge = (page) => page.locator('[data-testid="badge"]').evaluate((b) => ({ text: b.textContent, label: b.getAttribute('aria-label') }));

/** newID is a fresh message id: 24 hex digits, the first 8 the time (default now) in seconds. */
export const newID = (at = new Date()) => Math.floor(at.getTime() / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex');

/** The filters of the page's tabs, as it passes them to messagesConnection. */
export const tabFilters = {
  all: { archived: false, snoozed: false },
  unread: { read: false, archived: false, snoozed: false },
  archived: { archived: true },
};

/** keyGraphQL runs a GraphQL document with the demo API key and returns its data. */
export async function keyGraphQL(server, query, variables = {}) {
  const res = await fetch(`${server.baseURL}/graphql`, {
    method: 'POST',
    headers: { authorization: `ApiKey ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

/**
 * inAppPage is one page of a subscriber's in-app messages in a tab's order and filter,
 * as messagesConnection gives it to the API key: { ids, messages, hasNextPage, endCursor }.
 */
export async function inAppPage(server, subscriberId, filter, first = 20, after = undefined) {
  const data = await keyGraphQL(server, `query($s: String!, $first: Int!, $after: String, $read: Boolean, $archived: Boolean, $snoozed: Boolean) {
    messagesConnection(subscriberId: $s, channel: in_app, read: $read, archived: $archived, snoozed: $snoozed, first: $first, after: $after) {
      edges { node { _id channel read seen archived lastReadDate createdAt cta { action { status result { type } buttons { type content resultContent } } } } }
      pageInfo { hasNextPage endCursor } } }`, { s: subscriberId, first, after, ...filter });
  const { edges, pageInfo } = data.messagesConnection;
  const messages = edges.map((e) => e.node);
  return { ids: messages.map((m) => m._id), messages, ...pageInfo };
}

/** counts are a subscriber's in-app messageCounts, with all channels' total beside them. */
export async function counts(server, subscriberId) {
  const data = await keyGraphQL(server, `query($s: String!) {
    inApp: messageCounts(subscriberId: $s, channel: in_app) { total unread unseen archived }
    all: messageCounts(subscriberId: $s) { total } }`, { s: subscriberId });
  return { ...data.inApp, allChannels: data.all.total };
}

/** message reads one message's state with the API key. */
export async function message(server, subscriberId, id) {
  const data = await keyGraphQL(server, `query($s: String!) {
    messages(subscriberId: $s, limit: 1000) { data { _id read seen archived archivedAt lastReadDate cta { action { status result { type } } } } } }`, { s: subscriberId });
  const m = data.messages.data.find((x) => x._id === id);
  assert.ok(m, `message ${id} of ${subscriberId}`);
  return m;
}
