// The entry point: one server for all suites, started by the first. The suites are
// modules, not *.test.mjs files, so that `node --test` runs them in this one process.

import './suites/setup.mjs';
import './suites/audits.mjs';
import './suites/relay.mjs';
import './suites/relay-spec.mjs';
import './suites/apollo.mjs';
import './suites/http-cache.mjs';
import './suites/subscriptions.mjs';
import './suites/doors.mjs';
import './suites/backpressure.mjs';
import './suites/brokenjson.mjs';
import './suites/trusted.mjs';
