// Starts one server for every suite, with the harness and fixture of the REST SDK suite
// (rest/testdata/sdk), as a test of its own: a failure to build, to reach MariaDB, to
// load or to serve is reported once with its cause, and the suites after it are cancelled
// by their before hooks. The server is stopped and its database dropped after the last
// test, whatever happened.

import { after, test } from 'node:test';

import { envA, envB, records } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { Server } from '../../../../rest/testdata/sdk/lib/harness.mjs';
import { ctx } from '../lib/context.mjs';

const server = new Server();

test('setup: build the server, create and load its MariaDB database, serve', { timeout: 900_000 }, async () => {
  // The harness serves in production mode, where introspection is off; the audits of
  // {variables} query __type, and frontends generate their types by introspection. The
  // server process inherits this environment (serve --graphql-introspection).
  process.env.GRAPHQL_INTROSPECTION = 'true';
  // The doors suite waits for a socket without connection_init to be closed (4408).
  process.env.WEBSOCKET_INIT_TIMEOUT = '2s';
  await server.start(records);
  const key = await server.apiKey(envA, 'graphql-clients');
  const keyB = await server.apiKey(envB, 'graphql-clients');
  Object.assign(ctx, { url: server.baseURL, graphqlURL: `${server.baseURL}/graphql`, key, keyB, server });
});

after(async () => {
  await server.stop();
});
