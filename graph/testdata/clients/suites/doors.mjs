// The guards of a long-lived door, as the published clients see them: a key revoked
// while a graphql-ws socket and a graphql-sse stream are open ends both within seconds
// (close 4403 with the reason; a last event whose error is UNAUTHENTICATED, then the
// end), and a socket is held to graphql-transport-ws's close codes (4400 for a message
// that is not the protocol's, 4408 without connection_init) and to the server's bounds
// (an operation past them refused by itself, naming the limit, the socket kept). The suite's server closes sockets without connection_init
// after 2 s (WEBSOCKET_INIT_TIMEOUT, set by the setup).

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import WebSocket from 'ws';

import { envA } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { ctx, running } from '../lib/context.mjs';
import { EventStream, messageEvents, sseClient, subscribeSSE, subscribeWS, wsClient, wsURL } from '../lib/events.mjs';

/** closeOf resolves with the close event of a graphql-ws client, or fails after ms. */
function closeOf(closes, ms, what) {
  return Promise.race([closes, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms))]);
}

/** rawSocket opens a WebSocket speaking graphql-transport-ws and resolves with it, open, and its close. */
function rawSocket() {
  const ws = new WebSocket(wsURL(), 'graphql-transport-ws');
  const closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    ws.on('open', () => resolve({ ws, closed }));
    ws.on('error', reject);
  });
}

describe('the guards of open sockets and streams (graphql-ws, graphql-sse)', () => {
  before(running);

  test('a key revoked while its socket and its stream are open: 4403 with the reason, and a last UNAUTHENTICATED event', async () => {
    const key = await ctx.server.apiKey(envA, 'doors-revoked');
    let resolveClose;
    const closes = new Promise((resolve) => { resolveClose = resolve; });
    const ws = wsClient(`ApiKey ${key}`, { on: { closed: (event) => resolveClose(event) } });
    const sse = sseClient(`ApiKey ${key}`);
    try {
      const socketStream = await subscribeWS(ws, { subscriberId: 'live-a' }, 'socket of the key');
      const eventStream = await subscribeSSE(sse, { subscriberId: 'live-a' }, 'stream of the key');
      const revoked = Date.now();
      await ctx.server.revokeKey(envA, 'doors-revoked');

      const event = await closeOf(closes, 8_000, 'the socket of a revoked key');
      assert.equal(event.code, 4403, `close code (reason ${event.reason})`);
      assert.match(String(event.reason), /^Forbidden: API key was revoked/);
      const item = await socketStream.take(5_000);
      assert.equal(item.error?.code, 4403, `the subscription's sink got the close: ${JSON.stringify(item)}`);

      const errors = await eventStream.errors(8_000);
      assert.deepEqual(errors.map((e) => e.extensions?.code), ['UNAUTHENTICATED'], JSON.stringify(errors));
      assert.match(errors[0].message, /revoked/);
      assert.ok((await eventStream.take(5_000)).complete, 'the stream ends after its error event');
      const took = Date.now() - revoked;
      assert.ok(took < 8_000, `both closed ${took} ms after the revocation`);
    } finally {
      await ws.dispose();
      sse.dispose();
    }
  });

  test('one subscription more than a socket may hold is refused by itself, naming the limit, and the socket kept', async () => {
    const closes = [];
    const client = wsClient(`ApiKey ${ctx.key}`, { on: { closed: (event) => closes.push(event) } });
    try {
      // The default bound is 50 subscriptions on one socket.
      const streams = [];
      for (let i = 0; i < 51; i++) {
        const stream = new EventStream(`subscription ${i}`);
        stream.dispose = client.subscribe({ query: messageEvents, variables: { subscriberId: 'live-a' } }, stream.sink);
        streams.push(stream);
      }
      const errors = await streams[50].errors(10_000);
      assert.deepEqual(errors.map((e) => e.extensions?.code), ['RATE_LIMITED'], JSON.stringify(errors));
      assert.match(errors[0].message, /^too many subscriptions: at most 50 on one socket/);
      // The fifty are kept: a query over the same socket still answers.
      await new Promise((resolve, reject) => client.subscribe({ query: '{ __typename }' }, { next: () => {}, error: reject, complete: resolve }));
      assert.deepEqual(closes, [], 'the socket was not closed');
      for (const s of streams.slice(0, 50)) s.dispose();
    } finally {
      await client.dispose();
    }
  });

  test('a message that is not the protocol\'s closes the socket with 4400', async () => {
    const { ws, closed } = await rawSocket();
    ws.send('this is not JSON');
    const { code, reason } = await closeOf(closed, 5_000, 'a socket sent garbage');
    assert.equal(code, 4400, reason);
    assert.match(reason, /^Invalid message received/);
  });

  test('a socket that never sends connection_init is closed with 4408', async () => {
    const { closed } = await rawSocket();
    const { code, reason } = await closeOf(closed, 10_000, 'a socket without connection_init');
    assert.equal(code, 4408, reason);
    assert.equal(reason, 'Connection initialisation timeout');
  });
});
