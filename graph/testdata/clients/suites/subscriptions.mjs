// Live messageEvents with the published subscription clients: graphql-ws over WebSocket
// (graphql-transport-ws, credentials in connection_init) and graphql-sse in distinct
// connections mode (one POST answered with text/event-stream, credentials in the
// Authorization header). Every writer is seen: a mark through GraphQL, a row inserted
// with plain SQL, the server binary's import. A stream holds one subscriber's messages
// only, a session may follow only its own subscriber, a refused credential closes the
// socket with 4403 (401 for SSE), and a client that resumes from a cursor gets exactly
// what it missed, in order, then the live events.
//
// The suite makes its own two subscribers (live-a and live-b, in environment A) and their
// messages, and gives each test messages no other test changes: a repeated identical
// mark changes nothing and is no event. A change committed just before a subscription is
// registered may still reach it (the feed publishes at its next poll, and clients upsert
// by id), so each test starts once the changes before it have been published.

import assert from 'node:assert/strict';
import { before, beforeEach, describe, test } from 'node:test';

import WebSocket from 'ws';

import { envA, orgA } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { ctx, graphql, running } from '../lib/context.mjs';
import {
  EventStream, eventWait, importRecords, insertRow, messageEvents, newID, sseClient, subscribeSSE, subscribeWS, wsClient,
} from '../lib/events.mjs';

/** id returns a 24-hex id: a 4-hex tag, then n in hex (the fixture's scheme, with tags of its own). */
const id = (tag, n) => tag + n.toString(16).padStart(20, '0');

const createdAt = '2025-04-01T08:00:00.000Z';
const subscriber = (n, subscriberId) => ({
  _id: id('5c00', n), subscriberId, _organizationId: orgA, _environmentId: envA, deleted: false, createdAt, updatedAt: createdAt,
});
const liveA = subscriber(1, 'live-a');
const liveB = subscriber(2, 'live-b');
const buttons = [
  { type: 'primary', content: 'Accept', resultContent: 'Accepted' },
  { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
];

/** message is an in-app message with two buttons, pending, in the import format. */
function message(n, sub) {
  return {
    _id: id('ac00', n), _environmentId: envA, _organizationId: orgA, _notificationId: id('4c00', n),
    _subscriberId: sub._id, subscriber: sub, createdAt, transactionId: 'txn-live', channel: 'in_app',
    read: false, seen: false, status: 'sent', title: `Live ${n}`, content: [],
    cta: { type: 'redirect', data: { url: `https://example.com/live/${n}` }, action: { status: 'pending', buttons } },
  };
}

// The messages each test changes, by name.
const m = {
  wsMark: message(1, liveA),
  isolationA: message(2, liveA),
  isolationB: message(3, liveB),
  sessionA: message(4, liveA),
  sessionB: message(5, liveB),
  resumeSeen: message(6, liveA),
  resumeMissed: message(7, liveA),
  resumeLive: message(8, liveA),
  sse: message(9, liveA),
  floorBefore: message(10, liveA),
  floorSeen: message(11, liveA),
  floorLive: message(12, liveA),
  resumeOther: message(13, liveB),
};

/** settle outlasts two polls of the feed (EVENTS_POLL_INTERVAL, 100 ms by default). */
const settle = 300;

/** mark presses the primary button of a message through GraphQL, with environment A's key. */
async function mark(msg, status) {
  await graphql(`mutation Mark($s: String!, $id: ID!, $status: MessageActionStatus!) {
    markMessageAction(subscriberId: $s, messageId: $id, type: primary, status: $status) { _id }
  }`, { variables: { s: msg.subscriber.subscriberId, id: msg._id, status } });
}

/** session exchanges environment A's key for a session token of the subscriber. */
async function session(subscriberId) {
  const res = await fetch(`${ctx.url}/v1/inbox/session`, {
    method: 'POST',
    headers: { authorization: `ApiKey ${ctx.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriberId }),
  });
  const body = await res.text();
  assert.equal(res.status, 201, `POST /v1/inbox/session answered ${res.status}: ${body}`);
  return JSON.parse(body).token;
}

/** pick keeps what the tests compare of an event (not its cursor, which is opaque). */
const pick = ({ kind, id: _id, subscriberId, status }) => ({ kind, _id, subscriberId, status });

/**
 * firstEvent opens a stream of live-a's events, marks msg done, and returns the event
 * that brings it (checked), closing the client: a client that saw one event, then dropped.
 */
async function firstEvent(msg) {
  const client = wsClient(`ApiKey ${ctx.key}`);
  try {
    const stream = await subscribeWS(client, { subscriberId: 'live-a' }, 'before the disconnect');
    await mark(msg, 'done');
    const seen = await stream.next();
    assert.deepEqual(pick(seen), { kind: 'updated', _id: msg._id, subscriberId: 'live-a', status: 'done' });
    return seen;
  } finally {
    await client.dispose();
  }
}

/**
 * refused subscribes with a client that must be refused and returns what its sink's
 * error got (graphql-ws hands the CloseEvent) and the close its closed listener saw.
 */
async function refused(makeClient) {
  let closed;
  const client = makeClient({ on: { closed: (event) => { closed = event; } } });
  const stream = new EventStream('refused graphql-ws');
  stream.dispose = client.subscribe({ query: messageEvents, variables: { subscriberId: 'live-a' } }, stream.sink);
  try {
    const item = await stream.take(eventWait);
    return { item, closed };
  } finally {
    await client.dispose();
  }
}

describe('messageEvents subscriptions (graphql-ws and graphql-sse)', () => {
  before(async () => {
    running();
    await importRecords([...Object.values(m)]);
  });
  beforeEach(() => new Promise((resolve) => setTimeout(resolve, settle)));

  test('graphql-ws with an API key: a mark arrives as updated with its status, a row inserted with SQL as created', async () => {
    const client = wsClient(`ApiKey ${ctx.key}`);
    try {
      const stream = await subscribeWS(client, { subscriberId: 'live-a' });
      await mark(m.wsMark, 'done');
      assert.deepEqual(pick(await stream.next()), { kind: 'updated', _id: m.wsMark._id, subscriberId: 'live-a', status: 'done' });

      const raw = await insertRow({ environmentId: envA, organizationId: orgA, subscriberRecordId: liveA._id, title: 'Inserted by another writer' });
      const e = await stream.next();
      assert.deepEqual({ ...pick(e), title: e.title }, { kind: 'created', _id: raw, subscriberId: 'live-a', status: 'pending', title: 'Inserted by another writer' });
      await stream.quiet(300);
    } finally {
      await client.dispose();
    }
  });

  test("a subscriber's stream does not get another subscriber's events", async () => {
    const client = wsClient(`ApiKey ${ctx.key}`);
    try {
      const streamA = await subscribeWS(client, { subscriberId: 'live-a' }, 'live-a');
      const streamB = await subscribeWS(client, { subscriberId: 'live-b' }, 'live-b');
      // B first: were B's event to leak into A's stream, it would come before A's own.
      await mark(m.isolationB, 'done');
      assert.deepEqual(pick(await streamB.next()), { kind: 'updated', _id: m.isolationB._id, subscriberId: 'live-b', status: 'done' });
      await mark(m.isolationA, 'done');
      assert.deepEqual(pick(await streamA.next()), { kind: 'updated', _id: m.isolationA._id, subscriberId: 'live-a', status: 'done' });
      await Promise.all([streamA.quiet(300), streamB.quiet(0)]);
    } finally {
      await client.dispose();
    }
  });

  test("a session follows its own subscriber only: without subscriberId it gets A's events, naming B is FORBIDDEN", async () => {
    const client = wsClient(`Bearer ${await session('live-a')}`);
    try {
      const forbidden = await subscribeWS(client, { subscriberId: 'live-b' }, 'session of live-a naming live-b');
      const errors = await forbidden.errors();
      assert.deepEqual(errors.map((e) => e.extensions?.code), ['FORBIDDEN'], JSON.stringify(errors));

      const own = await subscribeWS(client, {}, 'session of live-a');
      await mark(m.sessionB, 'done');
      await mark(m.sessionA, 'done');
      assert.deepEqual(pick(await own.next()), { kind: 'updated', _id: m.sessionA._id, subscriberId: 'live-a', status: 'done' });
      await own.quiet(300);
    } finally {
      await client.dispose();
    }
  });

  test('connection_init with a bad credential: the socket closes with 4403 "Forbidden: ..." and the client reports it', async () => {
    const cases = {
      'unknown API key': 'ApiKey not-a-key',
      'forged session token': 'Bearer not.a.token',
      'no Authorization': undefined,
    };
    for (const [name, authorization] of Object.entries(cases)) {
      const { item, closed } = await refused((options) => wsClient(authorization, options));
      const event = item.error;
      assert.ok(event && typeof event.code === 'number', `${name}: the sink's error is a CloseEvent, got ${JSON.stringify(item)}`);
      assert.equal(event.code, 4403, `${name}: close code (reason ${event.reason})`);
      assert.match(String(event.reason), /^Forbidden: /, name);
      assert.equal(closed?.code, 4403, `${name}: the closed listener saw the same close`);
    }
  });

  test("a WebSocket from a browser page of another origin is refused at the upgrade; the server's own origin passes", async () => {
    /** A ws WebSocket that sends Origin, as a browser does. */
    const from = (origin) => class extends WebSocket {
      constructor(url, protocols) { super(url, protocols, { origin }); }
    };
    let upgradeError;
    const { item } = await refused((options) => wsClient(`ApiKey ${ctx.key}`, {
      ...options, webSocketImpl: from('https://elsewhere.example'), on: { ...options.on, error: (err) => { upgradeError = err; } },
    }));
    assert.ok(item.error, `the subscription failed, got ${JSON.stringify(item)}`);
    assert.match(String(upgradeError?.message ?? upgradeError?.error?.message), /403/, 'ws reports the 403 of the upgrade');

    const own = wsClient(`ApiKey ${ctx.key}`, { webSocketImpl: from(ctx.url) });
    try {
      await subscribeWS(own, { subscriberId: 'live-a' }, 'same origin');
    } finally {
      await own.dispose();
    }
  });

  test('resuming with after: the cursor of the last event seen gives exactly the changes missed, in order, none repeated, then live ones', async () => {
    // The newest change before the stream begins is another subscriber's, so that only
    // what this test names is at stake here (the next test covers the other case).
    await mark(m.resumeOther, 'done');
    await new Promise((resolve) => setTimeout(resolve, settle));
    const seen = await firstEvent(m.resumeSeen);

    // The socket that resumes is open before the changes (an idle stream of live-b
    // holds it), so that the resumed stream's catch-up ends within milliseconds of the
    // last change, before the feed's next poll publishes it: what the catch-up read must
    // not come again live.
    const again = wsClient(`ApiKey ${ctx.key}`);
    try {
      const idle = await subscribeWS(again, { subscriberId: 'live-b' }, 'idle live-b');
      // Two changes while no client of live-a listens, one to the message already seen,
      // one to another.
      await mark(m.resumeSeen, 'pending');
      await mark(m.resumeMissed, 'done');
      const stream = await subscribeWS(again, { subscriberId: 'live-a', after: seen.cursor }, 'resumed');
      const missed = [await stream.next(), await stream.next()];
      // Whatever else comes before the live change would be a repeat or a stranger.
      const after = await stream.drain(500);
      assert.deepEqual([...missed, ...after].map(pick), [
        { kind: 'updated', _id: m.resumeSeen._id, subscriberId: 'live-a', status: 'pending' },
        { kind: 'updated', _id: m.resumeMissed._id, subscriberId: 'live-a', status: 'done' },
      ]);
      await mark(m.resumeLive, 'done');
      assert.deepEqual(pick(await stream.next()), { kind: 'updated', _id: m.resumeLive._id, subscriberId: 'live-a', status: 'done' });
      await idle.quiet(0);
    } finally {
      await again.dispose();
    }
  });

  test('resuming with after does not replay a change made before the stream began, even the newest one then', async () => {
    // This change is published before the first stream is registered: it was never the
    // stream's, and is the newest change when the stream begins.
    await mark(m.floorBefore, 'done');
    await new Promise((resolve) => setTimeout(resolve, settle));
    const seen = await firstEvent(m.floorSeen);
    await new Promise((resolve) => setTimeout(resolve, settle));

    const again = wsClient(`ApiKey ${ctx.key}`);
    try {
      const stream = await subscribeWS(again, { subscriberId: 'live-a', after: seen.cursor }, 'resumed, nothing missed');
      assert.deepEqual((await stream.drain(500)).map(pick), [], 'nothing changed after the cursor');
      await mark(m.floorLive, 'done');
      assert.deepEqual(pick(await stream.next()), { kind: 'updated', _id: m.floorLive._id, subscriberId: 'live-a', status: 'done' });
    } finally {
      await again.dispose();
    }
  });

  test('a forged cursor is BAD_USER_INPUT', async () => {
    const client = wsClient(`ApiKey ${ctx.key}`);
    try {
      const stream = await subscribeWS(client, { subscriberId: 'live-a', after: 'AQ' + 'A'.repeat(100) }, 'forged cursor');
      const errors = await stream.errors();
      assert.deepEqual(errors.map((e) => e.extensions?.code), ['BAD_USER_INPUT'], JSON.stringify(errors));
    } finally {
      await client.dispose();
    }
  });

  test('graphql-sse (distinct connections) with the Authorization header: a mark arrives as updated', async () => {
    const client = sseClient(`ApiKey ${ctx.key}`);
    try {
      const stream = await subscribeSSE(client, { subscriberId: 'live-a' });
      // gqlgen sends the stream's headers (the client's connected event) just before it
      // runs the resolver that registers the subscription: leave it that moment.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await mark(m.sse, 'done');
      assert.deepEqual(pick(await stream.next()), { kind: 'updated', _id: m.sse._id, subscriberId: 'live-a', status: 'done' });
      stream.dispose();
    } finally {
      client.dispose();
    }
  });

  test('graphql-sse with a bad key: 401 with UNAUTHENTICATED in a JSON body, before any stream', async () => {
    const client = sseClient('ApiKey not-a-key');
    try {
      const stream = new EventStream('graphql-sse, bad key');
      stream.dispose = client.subscribe({ query: messageEvents, variables: { subscriberId: 'live-a' } }, stream.sink);
      const item = await stream.take();
      const res = item.error?.response;
      assert.ok(res, `the client reports a NetworkError with the response, got ${item.error?.message ?? JSON.stringify(item)}`);
      assert.equal(res.status, 401);
      assert.match(res.headers.get('content-type') ?? '', /json/);
      const body = await res.json();
      // As /graphql answers any request with a bad credential (docs/api.md, "Errors and limits").
      assert.deepEqual(body.errors?.map((e) => e.extensions?.code), ['UNAUTHENTICATED'], JSON.stringify(body));
      assert.equal('data' in body, false, JSON.stringify(body));
    } finally {
      client.dispose();
    }
  });

  test("a message loaded by the server binary's import arrives as created", async () => {
    const client = wsClient(`ApiKey ${ctx.key}`);
    try {
      const stream = await subscribeWS(client, { subscriberId: 'live-a' });
      const imported = { ...message(0, liveA), _id: newID(), title: 'Imported' };
      await importRecords([imported]);
      const e = await stream.next();
      assert.deepEqual({ ...pick(e), title: e.title }, { kind: 'created', _id: imported._id, subscriberId: 'live-a', status: 'pending', title: 'Imported' });
      await stream.quiet(300);
    } finally {
      await client.dispose();
    }
  });
});
