// Trusted documents: each client's build tool writes its manifest, the server's CLI
// loads it unchanged (documents add), and the client sends its operations by id to a
// server of the suite's own in production with TRUSTED_DOCUMENTS=require:
// - Relay: relay-compiler with persistConfig writes its persisted map ({ md5: text }) and
//   artifacts whose params carry the id and no text; a fetch function sends documentId.
// - Apollo Client: @apollo/generate-persisted-query-manifest writes the manifest from the
//   app's gql documents; @apollo/persisted-query-lists gives the persisted query link the
//   ids, so Apollo sends extensions.persistedQuery.sha256Hash and never the text.
// - GraphQL Code Generator: the client preset with persistedDocuments writes
//   persisted-documents.json ({ "sha256:<hex>": text }) and documents carrying
//   __meta__.hash; a fetch function sends it as documentId.
// A session's arbitrary document is refused (PERSISTED_QUERY_NOT_IN_LIST), an unknown id
// is PERSISTED_QUERY_NOT_FOUND, over POST, graphql-ws and SSE alike; an API key still runs
// any document.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryIdsFromManifest } from '@apollo/persisted-query-lists';
import { generate } from '@graphql-codegen/cli';
import { preset as clientPreset } from '@graphql-codegen/client-preset';
import { createClient as createSSEClient } from 'graphql-sse';
import { createClient as createWSClient } from 'graphql-ws';
import ts from 'typescript';
import WebSocket from 'ws';

import { envA, records } from '../../../../rest/testdata/sdk/lib/fixture.mjs';
import { Server, repoRoot } from '../../../../rest/testdata/sdk/lib/harness.mjs';
import { running } from '../lib/context.mjs';
import { EventStream } from '../lib/events.mjs';

const require = createRequire(import.meta.url);
const relayBinary = require('relay-compiler');
const apolloManifestCLI = require.resolve('@apollo/generate-persisted-query-manifest/cli.js');

/** The subscriber whose session the pages hold. */
const subscriberId = 'alice';

/** An operation no frontend was built with. */
const arbitrary = '{ messages(limit: 100) { totalCount data { _id subject payload } } }';

const relaySource = `import { graphql } from 'react-relay';

export const inbox = graphql\`
  query RelayInboxQuery($subscriberId: String) {
    messagesConnection(first: 5, subscriberId: $subscriberId) { totalCount edges { node { _id title read } } }
  }
\`;
`;

// The Apollo app's documents: the manifest generator reads them from its source file,
// the test builds the same ones with gql (the link finds each by operation name).
const apolloInbox = `query ApolloInbox($subscriberId: String!) {
  messages(subscriberId: $subscriberId, limit: 5) { totalCount data { _id subject read } }
}`;
const apolloMarkSeen = `mutation ApolloMarkSeen($subscriberId: String!, $ids: [ID!]!) {
  markMessages(subscriberId: $subscriberId, messageIds: $ids, seen: true) { _id seen }
}`;
const apolloSource = `import { gql } from '@apollo/client';

export const INBOX = gql\`${apolloInbox}\`;
export const MARK_SEEN = gql\`${apolloMarkSeen}\`;
`;

const codegenSource = `import { graphql } from './gql/index.js';

export const CodegenInbox = graphql(\`
  query CodegenInbox($subscriberId: String, $limit: Int) {
    messages(subscriberId: $subscriberId, limit: $limit) { totalCount data { _id subject read } }
  }
\`);
export const CodegenBadge = graphql(\`
  subscription CodegenBadge($subscriberId: String) {
    messageCounts(subscriberId: $subscriberId, channel: in_app) { total unread }
  }
\`);
`;

/** exec runs a program in dir and resolves to its exit code and output. */
function exec(file, args, cwd) {
  return new Promise((ok) => {
    execFile(file, args, { cwd, timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      ok({ code: err ? (err.code ?? err.signal) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** relayProject compiles a Relay project whose compiler persists its queries to a file. */
async function relayProject(dir) {
  await mkdir(join(dir, 'src', '__generated__'), { recursive: true });
  await writeFile(join(dir, 'schema.graphql'), await readFile(join(repoRoot, 'schema.graphqls')));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  // relay-compiler refuses a persistConfig file that does not exist yet.
  await writeFile(join(dir, 'persisted_queries.json'), '{}');
  await writeFile(join(dir, 'relay.config.json'), JSON.stringify({
    src: './src', schema: './schema.graphql', language: 'javascript', artifactDirectory: './src/__generated__',
    customScalarTypes: { DateTime: 'string', JSON: 'unknown' },
    persistConfig: { file: './persisted_queries.json' },
  }));
  await writeFile(join(dir, 'src', 'Inbox.js'), relaySource);
  const { code, output } = await exec(relayBinary, [], dir);
  assert.equal(code, 0, `relay-compiler exited ${code}:\n${output}`);
  return { manifest: join(dir, 'persisted_queries.json'), artifacts: join(dir, 'src', '__generated__') };
}

/** apolloProject writes the app's source and runs generate-persisted-query-manifest on it. */
async function apolloProject(dir) {
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'src', 'inbox.js'), apolloSource);
  await writeFile(join(dir, 'persisted-query-manifest.config.json'), JSON.stringify({ documents: ['src/**/*.js'], output: 'persisted-query-manifest.json' }));
  const { code, output } = await exec(process.execPath, [apolloManifestCLI], dir);
  assert.equal(code, 0, `generate-persisted-query-manifest exited ${code}:\n${output}`);
  return { manifest: join(dir, 'persisted-query-manifest.json') };
}

/**
 * codegenProject runs GraphQL Code Generator's client preset with persistedDocuments and
 * compiles its TypeScript output to JavaScript, as the frontend's build would.
 */
async function codegenProject(dir) {
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'src', 'inbox.js'), codegenSource);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  const out = join(dir, 'src', 'gql') + '/';
  await generate({
    cwd: dir, silent: true,
    schema: join(repoRoot, 'schema.graphqls'),
    documents: [join(dir, 'src', '*.js')],
    generates: { [out]: { preset: clientPreset, presetConfig: { persistedDocuments: true } } },
  }, true);
  const generated = ts.transpileModule(await readFile(join(out, 'graphql.ts'), 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  await writeFile(join(out, 'graphql.js'), generated.outputText);
  return { manifest: join(out, 'persisted-documents.json'), documents: join(out, 'graphql.js') };
}

describe('Trusted documents (TRUSTED_DOCUMENTS=require)', () => {
  const server = new Server();
  let root;
  let key;
  let token;
  let projects;

  before(async () => {
    running();
    root = await mkdtemp(join(tmpdir(), 'graphql-trusted-'));
    // The three builds run while the server starts.
    const built = Promise.allSettled([relayProject(join(root, 'relay')), apolloProject(join(root, 'apollo')), codegenProject(join(root, 'codegen'))]);
    const saved = process.env.TRUSTED_DOCUMENTS;
    process.env.TRUSTED_DOCUMENTS = 'require';
    try {
      await server.start(records);
    } finally {
      if (saved === undefined) delete process.env.TRUSTED_DOCUMENTS;
      else process.env.TRUSTED_DOCUMENTS = saved;
    }
    key = await server.apiKey(envA, 'trusted-documents');
    const res = await fetch(`${server.baseURL}/v1/inbox/session`, {
      method: 'POST',
      headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subscriberId }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    ({ token } = await res.json());
    projects = (await built).map((r) => r.status === 'fulfilled' ? r.value : { error: r.reason });
  }, { timeout: 900_000 });

  after(async () => {
    await server.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** project returns a build's result, failing the test with its error. */
  const project = (i) => {
    if (projects[i].error) throw projects[i].error;
    return projects[i];
  };

  /** post sends body to /graphql with the session (or the given authorization) and returns status and body. */
  async function post(body, authorization = `Bearer ${token}`) {
    const res = await fetch(`${server.baseURL}/graphql`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  /** codes lists a body's errors' extensions.code. */
  const codes = (body) => (body.errors ?? []).map((e) => e.extensions?.code);

  /**
   * add loads a manifest with the server's CLI and waits until the server answers the
   * given id (every instance reads the ids every 2 s).
   */
  async function add(manifest, id, variables = { subscriberId }) {
    const out = await server.cli('documents', 'add', manifest);
    assert.equal(out, '', 'documents add reports on stderr');
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { body } = await post({ documentId: id, variables });
      if (!codes(body).includes('PERSISTED_QUERY_NOT_FOUND')) return;
      assert.ok(Date.now() < deadline, `${id} was not answered within 10 s of documents add`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  test('Relay: relay-compiler persists its queries; documents add loads the map; the artifact\'s id is answered', async () => {
    const { manifest, artifacts } = project(0);
    const map = JSON.parse(await readFile(manifest, 'utf8'));
    const operation = (await import(pathToFileURL(join(artifacts, 'RelayInboxQuery.graphql.js')).href)).default;
    const { id, text } = operation.params;
    assert.equal(text, null, 'a persisted artifact carries no text');
    assert.match(id, /^[0-9a-f]{32}$/, 'relay-compiler\'s id is an MD5');
    assert.ok(map[id], `the persisted map has ${id}`);
    await add(manifest, id);
    // Relay's network layer: the fetch function sends the operation's id and variables.
    const fetchRelay = (params, variables) => post({ documentId: params.id, variables });
    const { status, body } = await fetchRelay(operation.params, { subscriberId });
    assert.equal(status, 200);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    assert.ok(body.data.messagesConnection.totalCount > 0, 'alice has messages');
    assert.ok(body.data.messagesConnection.edges.every((e) => typeof e.node.id === 'string'), 'Relay\'s added id is selected');
  });

  test('Apollo Client: the manifest of generate-persisted-query-manifest, loaded; the persisted query link sends only ids', async () => {
    const { manifest } = project(1);
    const parsed = JSON.parse(await readFile(manifest, 'utf8'));
    assert.equal(parsed.format, 'apollo-persisted-query-manifest');
    const inboxOp = parsed.operations.find((o) => o.name === 'ApolloInbox');
    await add(manifest, inboxOp.id, { subscriberId });
    const sent = [];
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new PersistedQueryLink(generatePersistedQueryIdsFromManifest({ loadManifest: async () => parsed }))
        .concat(new HttpLink({
          uri: `${server.baseURL}/graphql`,
          headers: { authorization: `Bearer ${token}` },
          fetch: (uri, init) => { sent.push(JSON.parse(init.body)); return fetch(uri, init); },
        })),
    });
    const { data } = await client.query({ query: gql(apolloInbox), variables: { subscriberId } });
    assert.ok(data.messages.totalCount > 0);
    const ids = data.messages.data.map((m) => m._id);
    const { data: marked } = await client.mutate({ mutation: gql(apolloMarkSeen), variables: { subscriberId, ids: ids.slice(0, 1) } });
    assert.deepEqual(marked.markMessages.map((m) => [m._id, m.seen]), [[ids[0], true]]);
    assert.equal(sent.length, 2);
    for (const body of sent) {
      assert.equal(body.query, undefined, 'no text is sent');
      assert.match(body.extensions.persistedQuery.sha256Hash, /^[0-9a-f]{64}$/);
    }
    // The same app without the link, sending a text no build made: refused.
    const plain = new ApolloClient({ cache: new InMemoryCache(), link: new HttpLink({ uri: `${server.baseURL}/graphql`, headers: { authorization: `Bearer ${token}` } }) });
    await assert.rejects(plain.query({ query: gql(arbitrary) }), (err) => {
      assert.ok(CombinedGraphQLErrors.is(err), `${err}`);
      assert.deepEqual(err.errors.map((e) => e.extensions.code), ['PERSISTED_QUERY_NOT_IN_LIST']);
      return true;
    });
  });

  test('GraphQL Code Generator: the client preset\'s persisted-documents.json, loaded; each document\'s __meta__.hash is answered', async () => {
    const { manifest, documents } = project(2);
    const map = JSON.parse(await readFile(manifest, 'utf8'));
    const { CodegenInboxDocument } = await import(pathToFileURL(documents).href);
    const hash = CodegenInboxDocument.__meta__.hash;
    assert.ok(map[hash], `persisted-documents.json has ${hash}`);
    await add(manifest, hash, { subscriberId, limit: 3 });
    // The preset's documented fetch: the hash as the documentId.
    const { status, body } = await post({ documentId: hash, variables: { subscriberId, limit: 3 } });
    assert.equal(status, 200);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    assert.equal(body.data.messages.data.length, 3);
  });

  test('a session\'s arbitrary document and an unknown id are refused; an API key runs any document', async () => {
    let res = await post({ query: arbitrary });
    assert.deepEqual(codes(res.body), ['PERSISTED_QUERY_NOT_IN_LIST']);
    assert.equal(res.body.data, undefined);
    res = await post({ documentId: `sha256:${'0'.repeat(64)}` });
    assert.deepEqual(codes(res.body), ['PERSISTED_QUERY_NOT_FOUND']);
    res = await post({ query: arbitrary }, `ApiKey ${key}`);
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    assert.ok(res.body.data.messages.totalCount > 0);
  });

  test('graphql-ws: a subscription and a query by id run, an arbitrary document is refused, the socket kept', { timeout: 30_000 }, async () => {
    const { documents } = project(2);
    const { CodegenBadgeDocument, CodegenInboxDocument } = await import(pathToFileURL(documents).href);
    const closes = [];
    const client = createWSClient({
      url: `${server.baseURL.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${token}` }, retryAttempts: 0, shouldRetry: () => false,
      on: { closed: (e) => closes.push(e.code) },
    });
    try {
      const badge = new EventStream('badge by id');
      // graphql-ws's client requires a query string in every subscribe: an empty one
      // stands for none beside the documentId.
      const stop = client.subscribe({ query: '', documentId: CodegenBadgeDocument.__meta__.hash, variables: { subscriberId } }, badge.sink);
      const first = await badge.take();
      assert.equal(first.result?.errors, undefined, JSON.stringify(first, (k, v) => v instanceof Error ? String(v) : v));
      assert.ok(first.result, JSON.stringify(first, (k, v) => v instanceof Error ? String(v) : v));
      assert.equal(typeof first.result.data.messageCounts.total, 'number');
      // The badge stays subscribed, so the client keeps its (lazy) socket open throughout.
      const refused = new EventStream('arbitrary');
      client.subscribe({ query: arbitrary }, refused.sink);
      assert.deepEqual((await refused.errors()).map((e) => e.extensions.code), ['PERSISTED_QUERY_NOT_IN_LIST']);
      const inbox = new EventStream('inbox by id');
      client.subscribe({ query: '', documentId: CodegenInboxDocument.__meta__.hash, variables: { subscriberId, limit: 2 } }, inbox.sink);
      const page = await inbox.take();
      assert.equal(page.result?.data?.messages?.data?.length, 2, JSON.stringify(page));
      assert.deepEqual(closes, [], 'the socket was kept');
      stop();
    } finally {
      await client.dispose();
    }
  });

  test('SSE (graphql-sse): a query by id runs, an arbitrary document is refused', { timeout: 30_000 }, async () => {
    const { documents } = project(2);
    const { CodegenInboxDocument } = await import(pathToFileURL(documents).href);
    const client = createSSEClient({ url: `${server.baseURL}/graphql`, singleConnection: false, headers: { Authorization: `Bearer ${token}` }, retryAttempts: 0 });
    try {
      const byID = new EventStream('sse by id');
      client.subscribe({ documentId: CodegenInboxDocument.__meta__.hash, variables: { subscriberId, limit: 2 } }, byID.sink);
      const page = await byID.take();
      assert.equal(page.result?.data?.messages?.data?.length, 2, JSON.stringify(page));
      const refused = new EventStream('sse arbitrary');
      client.subscribe({ query: arbitrary }, refused.sink);
      assert.deepEqual((await refused.errors()).map((e) => e.extensions.code), ['PERSISTED_QUERY_NOT_IN_LIST']);
    } finally {
      client.dispose();
    }
  });
});
