// A row another program broke: plain SQL leaves text that is not JSON in the payload,
// overrides and cta of one message. Apollo Client still reads the whole page, and a
// graphql-ws stream the change as an event: the broken values null, everything else as
// stored. Before the store checked JSON columns, the page's body held the text as it was
// (no client could parse it) and the stream ended. The row is put back after.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

import { breakJSON, restoreJSON } from '../../../../rest/testdata/sdk/lib/broken.mjs';
import { fullRecords } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { ctx, running } from '../lib/context.mjs';
import { subscribeWS, wsClient } from '../lib/events.mjs';

const broken = fullRecords[0];
const intact = fullRecords[1];

/** The fields the broken columns hold, and what identifies the message. */
const fields = '_id transactionId payload overrides cta { type data { url } }';

describe('a row another writer broke', () => {
  const sql = (statement) => ctx.server.sql(statement);
  before(running);
  after(() => restoreJSON(sql, broken));

  test('brokenRowNullForApolloAndGraphqlWs', async () => {
    const client = wsClient(`ApiKey ${ctx.key}`);
    try {
      const events = await subscribeWS(client, {}, 'graphql-ws',
        `subscription { messageEvents { kind message { ${fields} } } }`);
      await breakJSON(sql, broken);
      for (;;) {
        const item = await events.take();
        assert.ok(item.result, `graphql-ws: expected the broken message's event, got ${JSON.stringify(item.error ?? item)}`);
        assert.equal(item.result.errors, undefined);
        const m = item.result.data.messageEvents.message;
        if (m._id !== broken._id) continue;
        assert.deepEqual(m, { _id: broken._id, transactionId: broken.transactionId, payload: null, overrides: null, cta: { type: null, data: null } });
        break;
      }
    } finally {
      await client.dispose();
    }

    const apollo = new ApolloClient({
      link: new HttpLink({ uri: ctx.graphqlURL, headers: { authorization: `ApiKey ${ctx.key}` } }),
      cache: new InMemoryCache(),
    });
    const { data, error } = await apollo.query({ query: gql`{ messages(limit: 1000) { data { ${fields} } } }` });
    assert.equal(error, undefined);
    const byId = (id) => data.messages.data.find((m) => m._id === id);
    assert.deepEqual(byId(broken._id), { __typename: 'Message', _id: broken._id, transactionId: broken.transactionId,
      payload: null, overrides: null, cta: { __typename: 'MessageCTA', type: null, data: null } });
    assert.deepEqual(byId(intact._id).payload, intact.payload, 'the other messages as stored');
  });
});
