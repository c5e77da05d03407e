// Apollo Client: the cache keeps what a query fetched when a mutation answers with less of
// the same message (with typePolicies.mjs, and not without it), and an invalid query
// reaches the caller as GraphQL errors, not as a failure of the network.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';

import { markTargets, sharedSubscriberId } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { ctx, running } from '../lib/context.mjs';
import { typePolicies } from '../typePolicies.mjs';

/** The inbox a frontend shows: the messages marked by the tests, with their buttons and result. */
const inbox = gql`
  query Inbox($subscriberId: String!) {
    messages(subscriberId: $subscriberId, transactionId: ["txn-mark"], limit: 10) {
      data { _id cta { type data { url } action { status buttons { type content } result { type payload } } } }
    }
  }
`;

/** Pressing a button, answering only what the mutation changed. */
const mark = gql`
  mutation Mark($subscriberId: String!, $id: ID!) {
    markMessageAction(subscriberId: $subscriberId, messageId: $id, type: primary, status: done) {
      _id cta { action { status result { type } } }
    }
  }
`;

/** What a message component reads from the cache after the mutation. */
const cachedMessage = gql`
  fragment CachedMessage on Message {
    _id cta { type data { url } action { status buttons { type content } result { type payload } } }
  }
`;

/** client is an Apollo Client as its documentation sets one up, with the API key in the headers. */
function client(cache, headers = {}) {
  return new ApolloClient({
    link: new HttpLink({ uri: ctx.graphqlURL, headers: { authorization: `ApiKey ${ctx.key}`, ...headers } }),
    cache,
  });
}

/** fetchThenMark queries the inbox, presses the primary button of one message and returns what the cache holds for it. */
async function fetchThenMark(apollo, target) {
  const { data } = await apollo.query({ query: inbox, variables: { subscriberId: sharedSubscriberId } });
  const fetched = data.messages.data.find((m) => m._id === target._id);
  assert.ok(fetched, `the inbox has message ${target._id}`);
  assert.equal(fetched.cta.action.buttons.length, 2, 'the message has two buttons before the mutation');
  await apollo.mutate({ mutation: mark, variables: { subscriberId: sharedSubscriberId, id: target._id } });
  const id = apollo.cache.identify({ __typename: 'Message', _id: target._id });
  // returnPartialData: what is left of the message, so that an assertion names what was lost.
  return { fetched, cached: apollo.cache.readFragment({ id, fragment: cachedMessage, returnPartialData: true }) };
}

describe('Apollo Client', () => {
  before(running);

  // Each merge policy is needed: without MessageCTA's, type and data are lost; without
  // MessageAction's, the buttons; without MessageActionResult's, the payload.
  test('with typePolicies.mjs the cache merges the mutation into the message: type, data, buttons and payload stay', async () => {
    const apollo = client(new InMemoryCache({ typePolicies }));
    // This message has a stored result payload, which the mutation neither selects nor changes.
    const { fetched, cached } = await fetchThenMark(apollo, markTargets.apiPayload);
    assert.ok(cached, 'the cache holds the message');
    assert.equal(cached.cta.type, fetched.cta.type);
    assert.deepEqual(cached.cta.data, fetched.cta.data);
    assert.deepEqual(cached.cta.action.buttons, fetched.cta.action.buttons);
    assert.equal(cached.cta.action.status, 'done');
    assert.equal(cached.cta.action.result.type, 'primary');
    assert.deepEqual(cached.cta.action.result.payload, fetched.cta.action.result.payload);
    const page = apollo.cache.readQuery({ query: inbox, variables: { subscriberId: sharedSubscriberId } });
    assert.ok(page, 'the whole inbox is still complete in the cache, so it renders without a refetch');
  });

  test('without typePolicies.mjs the mutation replaces the cta and the buttons are lost (why the policies exist)', async () => {
    const apollo = client(new InMemoryCache());
    const { cached } = await fetchThenMark(apollo, markTargets.node);
    assert.equal(cached?.cta?.action?.buttons, undefined, 'the default cache lost the buttons');
  });

  for (const [name, headers] of [
    ['with its default Accept (application/graphql-response+json first)', {}],
    ['with Accept: application/json (older clients)', { accept: 'application/json' }],
  ]) {
    test(`an invalid query reaches the caller as GraphQL errors, ${name}`, async () => {
      const apollo = client(new InMemoryCache({ typePolicies }), headers);
      const invalid = gql`query Invalid { messages(limit: 1) { data { _id noSuchField } } }`;
      const err = await apollo.query({ query: invalid }).then(
        () => assert.fail('the invalid query succeeded'),
        (e) => e,
      );
      assert.ok(CombinedGraphQLErrors.is(err),
        `Apollo reported ${err?.name}: ${err?.message}${err?.bodyText ? `, body ${err.bodyText}` : ''}; ` +
        'a GraphQL error needs a 200 answer (or application/graphql-response+json)');
      assert.match(err.errors[0].message, /noSuchField/);
    });
  }
});
