// The server's side of Relay's two specifications, which relay-compiler only checks in
// the schema: Global Object Identification (an opaque id on Message, Subscriber and
// Template; Query.node and Query.nodes find any of them again, within the caller's
// environment only) and Cursor Connections (PageInfo's startCursor and hasPreviousPage).

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { markTargets, sharedSubscriberId } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { ctx, graphql, running } from '../lib/context.mjs';

const pageInfo = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

/** firstMarked returns the global and record ids of a message with a subscriber and a template, and of those two. */
async function firstMarked(key) {
  const { messagesConnection: conn } = await graphql(`{
    messagesConnection(first: 1, subscriberId: "${sharedSubscriberId}", transactionId: ["txn-mark"]) {
      edges { node { id _id subscriber { id _id } template { id _id } } }
    }
  }`, { key });
  assert.equal(conn.edges.length, 1, 'the environment has a marked message');
  return conn.edges[0].node;
}

describe('Relay server specifications (global ids, node, nodes, PageInfo)', () => {
  before(running);

  test('PageInfo: a first page starts at its first edge and has nothing before it; an empty page has no cursors', async () => {
    const { messagesConnection: first } = await graphql(`{ messagesConnection(first: 2, subscriberId: "alice") { edges { cursor } ${pageInfo} } }`);
    assert.deepEqual(first.pageInfo, {
      hasNextPage: true, hasPreviousPage: false, startCursor: first.edges[0].cursor, endCursor: first.edges[1].cursor,
    });
    const { messagesConnection: empty } = await graphql(`{ messagesConnection(first: 2, subscriberId: "nobody") { edges { cursor } ${pageInfo} } }`);
    assert.deepEqual(empty, { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
  });

  test('PageInfo: a later page starts at its first edge', async () => {
    const { messagesConnection: first } = await graphql(`{ messagesConnection(first: 2, subscriberId: "alice") { ${pageInfo} } }`);
    const { messagesConnection: next } = await graphql(
      `query Next($after: String) { messagesConnection(first: 2, subscriberId: "alice", after: $after) { edges { cursor } ${pageInfo} } }`,
      { variables: { after: first.pageInfo.endCursor } },
    );
    assert.equal(next.pageInfo.startCursor, next.edges[0].cursor);
    assert.equal(next.pageInfo.endCursor, next.edges.at(-1).cursor);
    // The spec lets a forward page answer false when it cannot tell cheaply; a boolean it must be.
    assert.equal(typeof next.pageInfo.hasPreviousPage, 'boolean');
  });

  test('node and nodes find a message, its subscriber and its template by their opaque global ids', async () => {
    const m = await firstMarked();
    const ids = [m.id, m.subscriber.id, m.template.id];
    for (const [id, record] of [[m.id, m._id], [m.subscriber.id, m.subscriber._id], [m.template.id, m.template._id]]) {
      assert.equal(typeof id, 'string');
      assert.notEqual(id, record, 'a global id is not the record id');
    }
    assert.equal(new Set(ids).size, 3, 'global ids differ across types');
    const select = '__typename id ... on Message { _id } ... on Subscriber { _id } ... on Template { _id }';
    const { node } = await graphql(`query One($id: ID!) { node(id: $id) { ${select} } }`, { variables: { id: m.id } });
    assert.deepEqual(node, { __typename: 'Message', id: m.id, _id: m._id });
    const { nodes } = await graphql(`query Many($ids: [ID!]!) { nodes(ids: $ids) { ${select} } }`, { variables: { ids } });
    assert.deepEqual(nodes, [
      { __typename: 'Message', id: m.id, _id: m._id },
      { __typename: 'Subscriber', id: m.subscriber.id, _id: m.subscriber._id },
      { __typename: 'Template', id: m.template.id, _id: m.template._id },
    ]);
    assert.ok(Object.values(markTargets).some((t) => t._id === m._id), 'the message is one of the fixture');
  });

  test("another environment's global ids resolve to null, as a missing record does", async () => {
    const other = await firstMarked(ctx.keyB);
    const ids = [other.id, other.subscriber.id, other.template.id];
    const { node } = await graphql('query One($id: ID!) { node(id: $id) { id } }', { variables: { id: other.id } });
    assert.equal(node, null);
    const { nodes } = await graphql('query Many($ids: [ID!]!) { nodes(ids: $ids) { id } }', { variables: { ids } });
    assert.deepEqual(nodes, [null, null, null]);
  });
});
