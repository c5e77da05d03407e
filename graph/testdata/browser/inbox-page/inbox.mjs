// A customer's inbox page, on an origin of its own: with the subscriber session its
// backend created it lists and marks messages through the API's GraphQL endpoint with
// urql, and tries what it must not do. Everything it learns is rendered and kept on
// window.inbox; the hash carries the settings: api, token, other (a subscriber id) and
// otherMessage (one of that subscriber's message ids).

import { Client, fetchExchange, gql } from '@urql/core';

const settings = new URLSearchParams(location.hash.slice(1));
const api = settings.get('api');
const token = settings.get('token');

const client = new Client({
  url: `${api}/graphql`,
  exchanges: [fetchExchange],
  requestPolicy: 'network-only',
  fetchOptions: () => ({ headers: { authorization: `Bearer ${token}` } }),
});

const List = gql`
  query Inbox($subscriberId: String) {
    messages(subscriberId: $subscriberId, limit: 20) {
      data { _id subscriber { subscriberId } cta { action { status buttons { type content } } } }
    }
  }
`;

const Mark = gql`
  mutation Mark($subscriberId: String!, $messageId: ID!) {
    markMessageAction(subscriberId: $subscriberId, messageId: $messageId, type: primary, status: done) {
      _id cta { action { status } }
    }
  }
`;

/** code is the extensions.code of a result's first GraphQL error, or why there is none. */
function code(result) {
  if (!result.error) return 'no error';
  if (result.error.networkError) return `network error: ${result.error.networkError.message}`;
  return result.error.graphQLErrors[0]?.extensions?.code ?? result.error.message;
}

const $ = (id) => document.getElementById(id);
const inbox = (window.inbox = { done: false });

async function main() {
  // a. the session's own messages
  const list = await client.query(List, {}).toPromise();
  if (list.error) throw new Error(`listing the inbox: ${list.error.message}`);
  inbox.messages = list.data.messages.data;
  for (const m of inbox.messages) {
    const li = document.createElement('li');
    li.dataset.id = m._id;
    li.dataset.subscriber = m.subscriber.subscriberId;
    li.dataset.status = m.cta?.action?.status ?? '';
    li.dataset.buttons = String(m.cta?.action?.buttons?.length ?? 0);
    li.textContent = `${m._id} (${m.subscriber.subscriberId}): ${li.dataset.status || 'no action'}`;
    $('messages').append(li);
  }

  // b. press the primary button of the first message that has one and is not done yet
  const target = inbox.messages.find((m) => m.cta?.action?.status !== 'done' &&
    m.cta?.action?.buttons?.some((b) => b.type === 'primary'));
  if (!target) throw new Error('no message of this subscriber has a pending primary button');
  const mark = await client.mutation(Mark, { subscriberId: target.subscriber.subscriberId, messageId: target._id }).toPromise();
  if (mark.error) throw new Error(`marking ${target._id}: ${mark.error.message}`);
  inbox.marked = { id: mark.data.markMessageAction._id, status: mark.data.markMessageAction.cta.action.status };
  $('marked-id').textContent = inbox.marked.id;
  $('marked-status').textContent = inbox.marked.status;

  // c. another subscriber's list
  const other = await client.query(List, { subscriberId: settings.get('other') }).toPromise();
  inbox.otherList = { code: code(other), data: other.data ?? null };
  $('other-list-code').textContent = inbox.otherList.code;

  // d. another subscriber's message
  const otherMark = await client.mutation(Mark, { subscriberId: settings.get('other'), messageId: settings.get('otherMessage') }).toPromise();
  inbox.otherMark = { code: code(otherMark), data: otherMark.data ?? null };
  $('other-mark-code').textContent = inbox.otherMark.code;
}

main().catch((err) => {
  inbox.fatal = String(err?.stack ?? err);
  $('fatal').textContent = inbox.fatal;
}).finally(() => {
  inbox.done = true;
  document.body.dataset.done = 'true';
});
