// The /v1 contract as the two published SDKs see it: one server, built from this
// checkout, on a MariaDB database of its own, loaded with the fixture, driven by
// @novu/api (which validates every answer with its zod schemas) and @novu/node (axios).
// Each suite registers its tests when imported, in this order; setup comes first and
// fills the context (server URL, keys, clients) the others read.

import './suites/setup.mjs';
import './suites/list.mjs';
import './suites/mark.mjs';
import './suites/node-sdk.mjs';
import './suites/errors.mjs';
import './suites/tenancy.mjs';
import './suites/records.mjs';
import './suites/openapi.mjs';
import './suites/marks.mjs';
import './suites/broken.mjs';
import './suites/delete.mjs';
