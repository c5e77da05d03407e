// A row another program broke: plain SQL leaves text that is not JSON in the payload,
// overrides and cta of one full record. Both SDKs still read the page, the whole of it:
// the broken values are left out (the cta an empty object), every other record as
// imported. The row is put back after, for whatever runs next.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { breakJSON, restoreJSON } from '../lib/broken.mjs';
import { ctx, running } from '../lib/context.mjs';
import { fullRecords, recordsA } from '../lib/fixture.mjs';

const broken = fullRecords[0];
const intact = fullRecords[1];

describe('a row another writer broke', () => {
  before(async () => {
    running();
    await breakJSON(ctx.sql, broken);
  });
  after(() => restoreJSON(ctx.sql, broken));

  it('brokenRowLeftOutByApiSdk', async () => {
    const { result } = await ctx.apiA.novu.messages.retrieve({ limit: 1000 });
    assert.equal(result.data.length, recordsA.length, 'the whole page, the broken record in it');
    const raw = ctx.apiA.last().json.data; // the SDK validated and parsed it: valid JSON
    const m = raw.find((r) => r._id === broken._id);
    assert.equal(m.payload, undefined);
    assert.equal(m.overrides, undefined);
    assert.deepEqual(m.cta, {});
    assert.equal(m.transactionId, broken.transactionId, 'the rest of the broken record as stored');
    assert.deepEqual(raw.find((r) => r._id === intact._id), intact);
    assert.equal(result.data.find((r) => r.id === broken._id).payload, undefined);
  });

  it('brokenRowLeftOutByNodeSdk', async () => {
    const res = await ctx.nodeA.novu.messages.list({ limit: 1000 });
    assert.equal(res.status, 200);
    const m = res.data.data.find((r) => r._id === broken._id);
    assert.equal(m.payload, undefined);
    assert.deepEqual(res.data.data.find((r) => r._id === intact._id), intact);
  });
});
