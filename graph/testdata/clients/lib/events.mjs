// What the subscription tests share: the messageEvents operation, a stream that turns a
// client's sink into awaitable events with bounded waits, the two published clients set
// up as their documentation shows for Node, and the writers that are not this server
// (a plain SQL INSERT into the suite's database, the server binary's import).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createClient as createSSEClient } from 'graphql-sse';
import { createClient as createWSClient } from 'graphql-ws';
import WebSocket from 'ws';

import { ctx } from './context.mjs';

/** How long any one wait for an event lasts before the test fails. */
export const eventWait = 10_000;

/** The subscription a live inbox runs: what it shows of a message, and the cursor to resume. */
export const messageEvents = `subscription MessageEvents($subscriberId: String, $channel: ChannelType, $after: String) {
  messageEvents(subscriberId: $subscriberId, channel: $channel, after: $after) {
    kind cursor
    message { _id title channel subscriber { subscriberId } cta { action { status result { type } } } }
  }
}`;

/**
 * EventStream collects what a client hands its sink, in order, so that a test can wait
 * for the next result (bounded), or check that nothing arrives for a while.
 */
export class EventStream {
  constructor(label) {
    this.label = label;
    this.items = [];
    this.wake = null;
  }

  /** sink is the { next, error, complete } both clients call. */
  get sink() {
    const push = (item) => {
      this.items.push(item);
      this.wake?.();
    };
    return {
      next: (result) => push({ result }),
      error: (error) => push({ error }),
      complete: () => push({ complete: true }),
    };
  }

  /** take returns the next item (a result, an error or the completion), failing after ms. */
  async take(ms = eventWait) {
    const deadline = Date.now() + ms;
    while (this.items.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`${this.label}: nothing arrived within ${ms} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => { clearTimeout(timer); resolve(); };
      });
      this.wake = null;
    }
    return this.items.shift();
  }

  /** next returns the next event, flattened by eventOf; an error or the end of the stream fails. */
  async next(ms = eventWait) {
    const item = await this.take(ms);
    assert.ok(item.result, `${this.label}: expected an event, got ${describe(item)}`);
    return eventOf(item.result, this.label);
  }

  /** drain waits ms and returns every event that arrived meanwhile, flattened by eventOf. */
  async drain(ms) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    const items = this.items.splice(0);
    return items.map((item) => {
      assert.ok(item.result, `${this.label}: expected an event, got ${describe(item)}`);
      return eventOf(item.result, this.label);
    });
  }

  /** quiet fails if anything arrives within ms. */
  async quiet(ms) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    assert.deepEqual(this.items.map(describe), [], `${this.label}: nothing else was to arrive`);
  }

  /**
   * errors returns the GraphQL errors the stream was refused with, as either client
   * reports them: graphql-ws hands an error message's list to the sink's error,
   * graphql-sse a result that carries errors.
   */
  async errors(ms = eventWait) {
    const item = await this.take(ms);
    if (Array.isArray(item.error)) return item.error;
    assert.ok(item.result?.errors?.length, `${this.label}: expected errors, got ${describe(item)}`);
    return item.result.errors;
  }
}

/** describe prints an item for an assertion message. */
function describe(item) {
  if (item.complete) return 'the end of the stream';
  if (item.error) return `error ${item.error instanceof Error ? item.error.message : JSON.stringify(item.error)}`;
  return JSON.stringify(item.result);
}

/** eventOf flattens one messageEvents result to what the tests compare, failing on errors. */
export function eventOf(result, label = 'stream') {
  assert.equal(result.errors, undefined, `${label}: an event with errors: ${JSON.stringify(result.errors)}`);
  const e = result.data.messageEvents;
  assert.equal(typeof e.cursor, 'string');
  assert.notEqual(e.cursor, '', `${label}: every event carries a cursor`);
  return {
    kind: e.kind,
    id: e.message._id,
    subscriberId: e.message.subscriber.subscriberId,
    status: e.message.cta?.action?.status ?? null,
    title: e.message.title,
    cursor: e.cursor,
  };
}

/** wsURL is the server's /graphql as a WebSocket URL. */
export const wsURL = () => ctx.graphqlURL.replace(/^http/, 'ws');

/**
 * wsClient is a graphql-ws client for Node (the ws package as its WebSocket), with the
 * credential in connection_init's payload. It never retries, so that a refusal reaches
 * the test at once; options are merged in.
 */
export function wsClient(authorization, options = {}) {
  return createWSClient({
    url: wsURL(),
    webSocketImpl: WebSocket,
    connectionParams: authorization === undefined ? {} : { Authorization: authorization },
    retryAttempts: 0,
    shouldRetry: () => false,
    ...options,
  });
}

/**
 * subscribeWS starts messageEvents on client and returns its stream once the server has
 * run the resolver: the server reads one socket's messages in order, so when a query
 * sent after the subscription has answered, the subscription is registered and the
 * changes the test makes next are its. query, when given, selects another part of the events.
 */
export async function subscribeWS(client, variables, label = 'graphql-ws', query = messageEvents) {
  const stream = new EventStream(label);
  stream.dispose = client.subscribe({ query, variables }, stream.sink);
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: { __typename } sent after the subscription did not answer within ${eventWait} ms`)), eventWait);
    client.subscribe({ query: '{ __typename }' }, {
      next: () => {},
      error: (err) => { clearTimeout(timer); reject(err instanceof Error ? err : new Error(`${label}: ${JSON.stringify(err)}`)); },
      complete: () => { clearTimeout(timer); resolve(); },
    });
  });
  return stream;
}

/** sseClient is a graphql-sse client in distinct connections mode with the Authorization header; it never retries. */
export function sseClient(authorization) {
  return createSSEClient({
    url: ctx.graphqlURL,
    singleConnection: false,
    headers: { Authorization: authorization },
    retryAttempts: 0,
  });
}

/**
 * subscribeSSE starts messageEvents over its own event stream and returns it once the
 * server answered with the stream's headers (the client's connected event).
 */
export async function subscribeSSE(client, variables, label = 'graphql-sse') {
  const stream = new EventStream(label);
  const sink = stream.sink;
  let opened;
  let failed;
  const ready = new Promise((resolve, reject) => { opened = resolve; failed = reject; });
  const timer = setTimeout(() => failed(new Error(`${label}: the stream did not open within ${eventWait} ms`)), eventWait);
  stream.dispose = client.subscribe({ query: messageEvents, variables }, {
    next: sink.next,
    error: (error) => { sink.error(error); failed(new Error(`${label}: the stream did not open: ${describe({ error })}`)); },
    complete: () => { sink.complete(); failed(new Error(`${label}: the stream ended before it opened`)); },
  }, { connected: opened });
  try {
    await ready;
  } finally {
    clearTimeout(timer);
  }
  return stream;
}

/** newID is a fresh 24-hex record id, time first as the server's own. */
export const newID = () => Math.floor(Date.now() / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex');

/**
 * insertRow writes a message row with plain SQL, as the platform's own workers do (no
 * code of this server runs): an in-app message with one button, of the subscriber whose
 * record id is given, in environment A. It returns the new message's id.
 */
export async function insertRow({ environmentId, organizationId, subscriberRecordId, title }) {
  const id = newID();
  const now = new Date().toISOString().replace('T', ' ').replace('Z', '');
  const cta = JSON.stringify({ type: 'redirect', action: { status: 'pending', buttons: [{ type: 'primary', content: 'OK' }] } });
  const q = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  await mariadb(`INSERT INTO messages (id, environment_id, organization_id, subscriber_id, created_at,
      transaction_id, subject, channel, email, phone, direct_webhook_url, title, cta, error_text, content)
    VALUES (${[id, environmentId, organizationId, subscriberRecordId, now, 'raw-txn', 'Raw', 'in_app', '', '', '', title, cta, '', '[]'].map(q).join(', ')})`);
  return id;
}

/** mariadb runs a statement in the suite's database with the MariaDB client (through vtgate on Vitess). */
async function mariadb(statement) {
  await ctx.server.sql(statement);
}

/** importRecords loads records (the import format, one per line) with the server binary's import command. */
export async function importRecords(records) {
  const dir = await mkdtemp(join(tmpdir(), 'graphql-events-'));
  try {
    const file = join(dir, 'messages.jsonl');
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    await ctx.server.cli('import', '--file', file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
