// Well-behaved clients under load keep their sockets (docs/live-updates.md, "Bounds"):
// graphql-ws's client sending 200 operations at once over one socket has every one
// answered (or refused by itself) and its socket kept; Apollo Client with GraphQLWsLink
// firing 40 queries at mount gets all 40; ten sessions of one subscriber (ten tabs of one
// person) connecting at once all connect with the default limits; and a socket closed
// for its rate limit (1013 Try Again Later) is reconnected by graphql-ws's client by
// itself, on a server of its own started with a small per-subscriber limit.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';

import { envA, records, sharedSubscriberId } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { Server } from '../../../../rest/testdata/sdk/lib/harness.mjs';
import { ctx, running } from '../lib/context.mjs';
import { messageEvents, wsClient } from '../lib/events.mjs';
import { typePolicies } from '../typePolicies.mjs';

/** session exchanges environment A's key on server base for a session token of subscriberId. */
async function session(subscriberId, base = ctx.url, key = ctx.key) {
  const res = await fetch(`${base}/v1/inbox/session`, {
    method: 'POST',
    headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriberId }),
  });
  const body = await res.text();
  assert.equal(res.status, 201, `POST /v1/inbox/session answered ${res.status}: ${body}`);
  return JSON.parse(body).token;
}

/**
 * watched is a graphql-ws client (no retries unless options say) that counts its
 * connections and closes. It is not lazy: its socket is kept between operations, as a
 * page's socket is while it holds a subscription, so a close it sees is the server's.
 */
function watched(authorization, options = {}) {
  const seen = { connected: 0, closes: [] };
  const client = wsClient(authorization, {
    lazy: false,
    ...options,
    on: {
      connected: () => { seen.connected++; },
      closed: (event) => { seen.closes.push({ code: event.code, reason: String(event.reason) }); },
    },
  });
  return { client, seen };
}

/** run sends one operation on client and resolves with how it ended: its results, or its error. */
function run(client, payload, ms = 60_000) {
  return new Promise((resolve) => {
    const results = [];
    const timer = setTimeout(() => resolve({ timedOut: true, results }), ms);
    client.subscribe(payload, {
      next: (r) => results.push(r),
      error: (error) => { clearTimeout(timer); resolve({ error, results }); },
      complete: () => { clearTimeout(timer); resolve({ results }); },
    });
  });
}

/** refusedCode is the extensions.code of an operation graphql-ws reports refused, else undefined. */
function refusedCode(outcome) {
  return Array.isArray(outcome.error) && outcome.error.length === 1 ? outcome.error[0].extensions?.code : undefined;
}

const count = '{ messages(limit: 1) { totalCount } }';

describe('sockets under load (graphql-ws, Apollo Client)', () => {
  before(running);

  test('graphql-ws: 200 operations at once over one socket are each answered, and the socket stays open', async () => {
    const { client, seen } = watched(`ApiKey ${ctx.key}`);
    try {
      const outcomes = await Promise.all(Array.from({ length: 200 }, () => run(client, { query: count })));
      const answered = outcomes.filter((o) => !o.error && !o.timedOut && o.results.length === 1 && !o.results[0].errors).length;
      const refused = outcomes.filter((o) => refusedCode(o) === 'RATE_LIMITED').length;
      const other = outcomes.filter((o) => o.timedOut || (o.error && refusedCode(o) !== 'RATE_LIMITED'));
      assert.deepEqual(other.map((o) => JSON.stringify(o).slice(0, 300)), [], 'every operation answered or refused by itself');
      assert.equal(answered + refused, 200);
      // The suite's server has a generous environment limit: nothing is refused.
      assert.equal(answered, 200, `answered ${answered}, refused ${refused}`);
      assert.equal(seen.connected, 1, 'one socket carried them all');
      assert.deepEqual(seen.closes, [], 'the socket was never closed');
      const again = await run(client, { query: '{ __typename }' });
      assert.equal(again.results[0]?.data?.__typename, 'Query', 'the socket still answers');
    } finally {
      await client.dispose();
    }
  });

  test('Apollo Client with GraphQLWsLink: 40 queries at mount are all answered over one socket', async () => {
    const { client: ws, seen } = watched(`ApiKey ${ctx.key}`);
    const apollo = new ApolloClient({ link: new GraphQLWsLink(ws), cache: new InMemoryCache({ typePolicies }) });
    try {
      // Forty components, each with its own query (distinct, so none is deduplicated).
      const queries = Array.from({ length: 40 }, (_, i) => apollo.query({
        query: gql`query Widget($limit: Int!) { messages(limit: $limit) { totalCount data { _id } } }`,
        variables: { limit: i + 1 },
        fetchPolicy: 'network-only',
      }));
      const results = await Promise.all(queries);
      results.forEach((r, i) => {
        assert.equal(r.error, undefined, `query ${i + 1}: ${r.error}`);
        assert.ok(r.data.messages.totalCount > 0, `query ${i + 1} answered ${JSON.stringify(r.data)}`);
        assert.equal(r.data.messages.data.length, Math.min(i + 1, r.data.messages.totalCount));
      });
      assert.equal(seen.connected, 1);
      assert.deepEqual(seen.closes, [], 'the socket was never closed');
    } finally {
      apollo.stop();
      await ws.dispose();
    }
  });

  test('ten sessions of one subscriber connecting at once all connect, subscribe and load their page', async () => {
    const tokens = [];
    for (let i = 0; i < 10; i++) tokens.push(await session(sharedSubscriberId));
    const tabs = tokens.map((token) => watched(`Bearer ${token}`));
    try {
      const loaded = await Promise.all(tabs.map(async ({ client }) => {
        const events = [];
        client.subscribe({ query: messageEvents, variables: {} }, {
          next: (r) => events.push(r), error: (e) => events.push({ error: e }), complete: () => {},
        });
        const [page, counts] = await Promise.all([
          run(client, { query: '{ messages(limit: 10) { totalCount data { _id } } }' }),
          run(client, { query: '{ messages(limit: 1) { totalCount } }' }),
        ]);
        return { page, counts, events };
      }));
      loaded.forEach(({ page, counts, events }, i) => {
        for (const [name, o] of Object.entries({ page, counts })) {
          assert.ok(!o.error && !o.timedOut && o.results[0]?.data, `tab ${i + 1}'s ${name}: ${JSON.stringify(o).slice(0, 300)}`);
        }
        assert.deepEqual(events.filter((e) => e.error), [], `tab ${i + 1}'s subscription was refused`);
      });
      tabs.forEach(({ seen }, i) => {
        assert.equal(seen.connected, 1, `tab ${i + 1} connected`);
        assert.deepEqual(seen.closes, [], `tab ${i + 1}'s socket was closed`);
      });
    } finally {
      await Promise.all(tabs.map(({ client }) => client.dispose()));
    }
  });

  describe('on a server whose subscribers may send 2 requests at once, then 1 every 2 seconds', () => {
    const limited = new Server();
    let key;

    before(async () => {
      running();
      const saved = { SESSION_RATE_LIMIT: process.env.SESSION_RATE_LIMIT, SESSION_RATE_BURST: process.env.SESSION_RATE_BURST };
      Object.assign(process.env, { SESSION_RATE_LIMIT: '0.5', SESSION_RATE_BURST: '2' });
      try {
        await limited.start(records);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
      key = await limited.apiKey(envA, 'backpressure');
    }, { timeout: 900_000 });

    after(async () => {
      await limited.stop();
    });

    test('a socket closed with 1013 for the rate limit is reconnected by graphql-ws by itself', { timeout: 60_000 }, async () => {
      const token = await session(sharedSubscriberId, limited.baseURL, key);
      // The subscriber's two requests at once, then a third refused: its bucket is empty.
      const get = () => fetch(`${limited.baseURL}/v1/messages?limit=1`, { headers: { authorization: `Bearer ${token}` } });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await get()).status);
      assert.deepEqual(statuses, [200, 200, 429]);

      // graphql-ws's own retry settings (5 attempts, its randomised back-off, its
      // shouldRetry): undefined takes the defaults wsClient turns off.
      const url = `${limited.baseURL.replace(/^http/, 'ws')}/graphql`;
      const { client, seen } = watched(`Bearer ${token}`, { url, retryAttempts: 5, shouldRetry: undefined });
      try {
        // Reconnected, its connection_init may take the one token back and its operation
        // find none: that operation is refused by itself (RATE_LIMITED, the socket kept),
        // and the page's next try, once a token is back, is answered over the same socket.
        let outcome = await run(client, { query: '{ __typename }' }, 45_000);
        for (let i = 0; i < 3 && refusedCode(outcome) === 'RATE_LIMITED'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 2_100));
          outcome = await run(client, { query: '{ __typename }' }, 10_000);
        }
        assert.ok(!outcome.error && !outcome.timedOut,
          `after the reconnection: ${outcome.error?.code ?? ''} ${outcome.error?.reason ?? outcome.error?.message ?? JSON.stringify(outcome)}; closes ${JSON.stringify(seen.closes)}`);
        assert.equal(outcome.results[0]?.data?.__typename, 'Query');
        assert.ok(seen.closes.length >= 1, 'the first connection_init was past the limit');
        for (const close of seen.closes) {
          assert.equal(close.code, 1013, JSON.stringify(close));
          assert.match(close.reason, /^Try Again Later: rate limit exceeded for this subscriber \(all its sessions together\): retry after \d+ s$/);
        }
        assert.equal(seen.connected, 1, 'connected once it was let in, and kept');
      } finally {
        await client.dispose();
      }
    });
  });
});
