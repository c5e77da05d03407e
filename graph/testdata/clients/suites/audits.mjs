// GraphQL over HTTP: every audit of graphql-http's server audit suite (the reference
// implementation of the GraphQL-over-HTTP specification), run against /graphql with the
// API key, one test per audit. A warning fails like an error: the target is none of either.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { serverAudits } from 'graphql-http';

import { ctx, fetchWithKey, running } from '../lib/context.mjs';

/** describeFailure says what the server answered, as far as the audit left it readable. */
async function describeFailure(result) {
  const res = result.response;
  let body = '';
  try {
    body = (await res.text()).slice(0, 500);
  } catch {
    body = '(body already read by the audit)';
  }
  return `${result.status.toUpperCase()}: ${result.reason}\n` +
    `answer: ${res.status} ${res.headers.get('content-type') ?? '(no content-type)'} ${body}`;
}

describe('GraphQL over HTTP (graphql-http server audits)', () => {
  before(running);

  // The URL is a function: the audits are listed now, the server starts later.
  for (const audit of serverAudits({ url: () => ctx.graphqlURL, fetchFn: fetchWithKey })) {
    test(`${audit.name} [${audit.id}]`, async () => {
      const result = await audit.fn();
      if (result.status !== 'ok') assert.fail(await describeFailure(result));
    });
  }
});
