// Starts the server the other suites drive, as a test of its own so that a failure to
// build, to reach MariaDB, to migrate, import or serve is reported once, as a failure,
// with its cause; the suites after it are then cancelled. The database is dropped and
// the server stopped after the last test, whatever happened.

import { after, test } from 'node:test';

import { apiClient, nodeClient } from '../lib/clients.mjs';
import { ctx } from '../lib/context.mjs';
import { envA, envB, records } from '../lib/fixture.mjs';
import { Server } from '../lib/harness.mjs';

const server = new Server();

test('setup: build the server, create and load its MariaDB database, serve', { timeout: 900_000 }, async () => {
  await server.start(records);
  const keyA = await server.apiKey(envA, 'sdk');
  const keyB = await server.apiKey(envB, 'sdk');
  const revokedKey = await server.apiKey(envA, 'sdk-revoked');
  await server.revokeKey(envA, 'sdk-revoked');
  Object.assign(ctx, {
    url: server.baseURL, keyA, keyB, revokedKey,
    apiA: apiClient(server.baseURL, keyA),
    apiB: apiClient(server.baseURL, keyB),
    nodeA: nodeClient(server.baseURL, keyA),
    nodeB: nodeClient(server.baseURL, keyB),
    sql: (statement) => server.sql(statement),
  });
});

after(async () => {
  await server.stop();
});
