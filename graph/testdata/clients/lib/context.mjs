// What the setup test hands the suites: the server's base URL and its /graphql URL, an
// API key of each environment of the fixture, and the harness's Server (its CLI and its
// database, for the writers that are not this server); and the two ways to reach the
// server raw.

import assert from 'node:assert/strict';

/** @type {{ url: string, graphqlURL: string, key: string, keyB: string, server: import('../../../../rest/testdata/sdk/lib/harness.mjs').Server }} */
export const ctx = {};

/** running is every suite's before hook: without a server, its tests cannot run. */
export function running() {
  if (!ctx.url) throw new Error('no server: the setup test failed');
}

/** authorized returns fetch's init with an API key (environment A's unless given) added to its headers. */
export function authorized(init = {}, key = ctx.key) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `ApiKey ${key}`);
  return { ...init, headers };
}

/** fetchWithKey is fetch with environment A's API key. */
export const fetchWithKey = (input, init) => fetch(input, authorized(init));

/**
 * graphql posts an operation as a plain client would and returns its data, failing on
 * any status but 200 and on any error in the answer.
 */
export async function graphql(query, { variables, operationName, key } = {}) {
  const res = await fetch(ctx.graphqlURL, authorized({
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
    body: JSON.stringify({ query, operationName, variables }),
  }, key));
  const text = await res.text();
  const name = operationName ?? query.replace(/\s+/g, ' ').trim().slice(0, 80);
  assert.equal(res.status, 200, `${name} answered ${res.status}: ${text}`);
  const body = JSON.parse(text);
  assert.equal(body.errors, undefined, `${name} answered errors: ${JSON.stringify(body.errors)}`);
  return body.data;
}
