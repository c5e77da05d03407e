// Keeps the server's OpenAPI document honest against the real client: for the message
// record and every object embedded in it, and for the page and error envelopes, each
// field @novu/api requires must be in the document's `required` list (and described).
// The document may require more than the SDK (a field the server always sends, such as
// _id): that is reported as a diagnostic, not a failure.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { MessageResponseDto$inboundSchema, MessagesResponseDto$inboundSchema } from '@novu/api/models/components/index.js';
import { ErrorDto$inboundSchema, ValidationErrorDto$inboundSchema } from '@novu/api/models/errors/index.js';

import { ctx, running } from '../lib/context.mjs';
import { compareRequired } from '../lib/schemas.mjs';

const listPath = '/v1/messages';
const markPath = '/v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}';

/** The objects of the record the document must describe, by path from the record. */
const embedded = [
  'Message',
  'Message.subscriber', 'Message.subscriber.channels', 'Message.subscriber.channels.credentials',
  'Message.template', 'Message.template.preferenceSettings',
  'Message.template.steps', 'Message.template.steps.filters', 'Message.template.steps.filters.children',
  'Message.template.steps.metadata', 'Message.template.steps.replyCallback',
  'Message.template.steps.variants', 'Message.template.steps.variants.filters', 'Message.template.steps.variants.filters.children',
  'Message.template.steps.variants.metadata',
  'Message.template.triggers', 'Message.template.triggers.variables', 'Message.template.triggers.subscriberVariables',
  'Message.template.notificationGroup',
  'Message.content', 'Message.content.styles',
  'Message.cta', 'Message.cta.data', 'Message.cta.action', 'Message.cta.action.buttons', 'Message.cta.action.result',
];

/** response returns the JSON schema of one documented answer, following $refs. */
function response(doc, path, method, status) {
  let res = doc.paths?.[path]?.[method]?.responses?.[status];
  while (res?.$ref) res = res.$ref.replace(/^#\//, '').split('/').reduce((n, k) => n?.[k], doc);
  const schema = res?.content?.['application/json']?.schema;
  assert.ok(schema, `the document describes the JSON of ${method.toUpperCase()} ${path} ${status}`);
  return schema;
}

/** check fails with the path and the difference when the SDK requires what the document does not. */
function check(t, r) {
  if (r.extra.length) t.diagnostic(`${r.path}: the document also requires ${r.extra.join(', ')} (the SDK does not)`);
  if (r.union) t.diagnostic(`${r.path}: ${r.union}`);
  const problems = [];
  if (r.missing.length) problems.push(`required by the SDK, not in the document's required list: ${r.missing.join(', ')}`);
  if (r.undocumented.length) problems.push(`required by the SDK, not among the document's properties: ${r.undocumented.join(', ')}`);
  if (problems.length) {
    assert.fail(`${r.path} (${r.name}): ${problems.join('; ')}. SDK requires [${r.sdkRequired.join(', ')}]; document requires [${r.oaRequired.join(', ')}]`);
  }
}

/** withoutInternal drops the SDK's own bookkeeping fields (request$, response$, body$) from a comparison. */
function withoutInternal(r) {
  const keep = (k) => !k.endsWith('$');
  return { ...r, sdkRequired: r.sdkRequired.filter(keep), missing: r.missing.filter(keep), undocumented: r.undocumented.filter(keep) };
}

describe('OpenAPI document against @novu/api', () => {
  before(running);

  const found = new Map();
  let doc;

  before(async () => {
    const res = await fetch(`${ctx.url}/openapi.json`);
    assert.equal(res.status, 200);
    doc = await res.json();
    for (const r of compareRequired(doc, MessageResponseDto$inboundSchema, response(doc, markPath, 'post', '201'), 'Message')) {
      found.set(r.path, r);
    }
  });

  for (const path of embedded) {
    it(`openapiRequired ${path}`, (t) => {
      const r = found.get(path);
      assert.ok(r, `the document describes ${path} as an object with properties (compared: ${[...found.keys()].join(', ')})`);
      check(t, r);
    });
  }

  it('openapiRequired MessagesPage and its data (GET /v1/messages 200)', (t) => {
    const results = compareRequired(doc, MessagesResponseDto$inboundSchema, response(doc, listPath, 'get', '200'), 'MessagesPage');
    assert.ok(results.find((r) => r.path === 'MessagesPage'), 'the page is an object with properties');
    assert.ok(results.find((r) => r.path === 'MessagesPage.data'), 'the page\'s data items are described');
    // Deeper objects are the record's own, checked above.
    for (const r of results.filter((x) => x.path === 'MessagesPage' || x.path === 'MessagesPage.data')) check(t, r);
  });

  for (const [status, path, method] of [['401', listPath, 'get'], ['404', markPath, 'post']]) {
    it(`openapiRequired error body (${method.toUpperCase()} ${status}) against ErrorDto`, (t) => {
      const [r] = compareRequired(doc, ErrorDto$inboundSchema, response(doc, path, method, status), `Error${status}`);
      assert.ok(r, `the ${status} body is an object with properties`);
      check(t, withoutInternal(r));
    });
  }

  for (const path of [listPath, markPath]) {
    const method = path === listPath ? 'get' : 'post';
    it(`openapiRequired error body (${method.toUpperCase()} 422) against ValidationErrorDto`, (t) => {
      const results = compareRequired(doc, ValidationErrorDto$inboundSchema, response(doc, path, method, '422'), 'Error422');
      assert.ok(results[0], 'the 422 body is an object with properties');
      for (const r of results) check(t, withoutInternal(r));
    });
  }
});
