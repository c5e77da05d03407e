// Relay: relay-compiler, the client's own judge of a schema, compiles two small projects
// against schema.graphqls as it is in the repository, each in a temporary directory, so
// that each gap is reported on its own:
// - an inbox: a paginated list over messagesConnection (@connection, @argumentDefinitions,
//   @refetchable on Query), which needs PageInfo's four fields;
// - a message: @refetchable on Message, which needs the Node interface and Query.node.
// Then the operations relay generated are sent to the server as Relay's network layer
// sends them, and must answer without errors.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { repoRoot } from '../../../../rest/testdata/sdk/lib/harness.mjs';
import { graphql, running } from '../lib/context.mjs';

/** The native relay-compiler binary the npm package ships (null on unsupported platforms). */
const relayBinary = createRequire(import.meta.url)('relay-compiler');

/** The inbox: a list of messages on Query, paginated forward by cursor. */
const inboxSource = `import { graphql } from 'react-relay';

export const inboxQuery = graphql\`
  query InboxQuery($subscriberId: String) {
    ...InboxList_query @arguments(subscriberId: $subscriberId)
  }
\`;

export const inboxList = graphql\`
  fragment InboxList_query on Query
    @argumentDefinitions(
      count: { type: "Int", defaultValue: 2 }
      cursor: { type: "String" }
      subscriberId: { type: "String" }
    )
    @refetchable(queryName: "InboxListPaginationQuery") {
    messagesConnection(first: $count, after: $cursor, subscriberId: $subscriberId)
      @connection(key: "InboxList_messagesConnection", filters: ["subscriberId"]) {
      totalCount
      edges {
        node { _id title read createdAt }
      }
    }
  }
\`;
`;

/** One message, refetchable on its own through Query.node. */
const messageSource = `import { graphql } from 'react-relay';

export const messageItem = graphql\`
  fragment MessageItem_message on Message
    @refetchable(queryName: "MessageItemRefetchQuery") {
    _id
    title
    read
    createdAt
    cta { action { status buttons { type content } result { type } } }
  }
\`;
`;

/**
 * compile writes a Relay project with the server's schema and the given sources into dir
 * and runs relay-compiler there; it resolves to the exit code and the compiler's output.
 */
async function compile(dir, sources) {
  await mkdir(join(dir, 'src', '__generated__'), { recursive: true });
  // The schema as it is, under a .graphql name: relay-compiler 21 does not load a
  // .graphqls file (it reports "'Query' root type must be provided").
  await copyFile(join(repoRoot, 'schema.graphqls'), join(dir, 'schema.graphql'));
  // The artifacts are ES modules (export default); the suite imports them.
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  await writeFile(join(dir, 'relay.config.json'), JSON.stringify({
    src: './src',
    schema: './schema.graphql',
    language: 'javascript',
    artifactDirectory: './src/__generated__',
    customScalarTypes: { DateTime: 'string', JSON: 'unknown' },
  }, null, 2));
  for (const [name, text] of Object.entries(sources)) await writeFile(join(dir, 'src', name), text);
  return new Promise((ok) => {
    execFile(relayBinary, [], { cwd: dir, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      ok({ code: err ? (err.code ?? err.signal) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** A project compiled once for the suite: its directory and the compiler's result. */
class Project {
  constructor(name, sources) {
    this.name = name;
    this.sources = sources;
  }

  async start(root) {
    this.dir = join(root, this.name);
    this.result = compile(this.dir, this.sources).catch((err) => ({ code: 'error', output: err.stack }));
  }

  /** compiled asserts that relay-compiler succeeded and wrote an artifact for each name. */
  async compiled(names) {
    const { code, output } = await this.result;
    assert.equal(code, 0, `relay-compiler exited ${code}:\n${output}`);
    const written = await readdir(join(this.dir, 'src', '__generated__'));
    for (const name of names) {
      assert.ok(written.includes(`${name}.graphql.js`), `no artifact for ${name}; written: ${written.join(', ')}`);
    }
  }

  /** artifact loads one generated artifact, failing if the compiler did not succeed. */
  async artifact(name) {
    const { code, output } = await this.result;
    assert.equal(code, 0, `relay-compiler failed, so there is nothing to send:\n${output}`);
    return (await import(pathToFileURL(join(this.dir, 'src', '__generated__', `${name}.graphql.js`)).href)).default;
  }
}

/** send posts an operation relay generated as Relay's network layer does and returns the data. */
const send = (operation, variables) => graphql(operation.params.text, { operationName: operation.params.name, variables });

describe('Relay (relay-compiler)', () => {
  const inbox = new Project('inbox', { 'Inbox.js': inboxSource });
  const message = new Project('message', { 'MessageItem.js': messageSource });
  let root;

  before(async () => {
    running();
    assert.ok(relayBinary, `relay-compiler ships no binary for ${process.platform} ${process.arch}`);
    root = await mkdtemp(join(tmpdir(), 'graphql-relay-'));
    await Promise.all([inbox.start(root), message.start(root)]);
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('relay-compiler compiles a @connection over messagesConnection with @argumentDefinitions and @refetchable', async () => {
    await inbox.compiled(['InboxQuery', 'InboxList_query', 'InboxListPaginationQuery']);
  });

  test('relay-compiler compiles a @refetchable fragment on Message', async () => {
    await message.compiled(['MessageItem_message', 'MessageItemRefetchQuery']);
  });

  test('the generated pagination query walks messagesConnection forward to the end', async () => {
    const page = await inbox.artifact('InboxListPaginationQuery');
    const seen = [];
    let cursor = null;
    for (let i = 0; i < 20; i++) {
      const { messagesConnection: conn } = await send(page, { count: 2, cursor, subscriberId: 'alice' });
      seen.push(...conn.edges.map((e) => e.node._id));
      if (conn.edges.length > 0) assert.equal(conn.pageInfo.endCursor, conn.edges.at(-1).cursor, 'endCursor is the last edge cursor');
      if (!conn.pageInfo.hasNextPage) break;
      cursor = conn.pageInfo.endCursor;
    }
    assert.ok(seen.length > 2, `alice has more than one page of messages, got ${seen.length}`);
    assert.equal(new Set(seen).size, seen.length, 'no message twice');
  });

  test('the generated refetch query finds a message again by its global id through node(id:)', async () => {
    const refetch = await message.artifact('MessageItemRefetchQuery');
    const { messagesConnection: conn } = await graphql('{ messagesConnection(first: 1, subscriberId: "alice") { edges { node { id _id } } } }');
    const first = conn.edges[0].node;
    assert.equal(typeof first.id, 'string');
    assert.notEqual(first.id, first._id, 'the global id is opaque, not the record id');
    const { node } = await send(refetch, { id: first.id });
    assert.equal(node?.__typename, 'Message');
    assert.equal(node.id, first.id);
    assert.equal(node._id, first._id);
  });
});
