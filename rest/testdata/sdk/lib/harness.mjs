// The server under test: built from this checkout, run against a MariaDB database of its
// own that is created for the run and dropped after it, loaded through the server's own
// CLI (migrate, import, apikey create).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Database } from './database.mjs';
import { buildServer, run, serve, stopServer } from './process.mjs';

/** The repository root: this directory is rest/testdata/sdk/lib. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * Server is one running instance with its database. start() does everything up to a
 * ready server; stop() undoes whatever start() got to, and is safe to call after a
 * failed start.
 */
export class Server {
  constructor() {
    this.db = new Database('sdk');
    this.databaseURL = this.db.url;
    this.proc = null;
    this.logs = [];
    this.dir = null;
    this.baseURL = null;
  }

  /** cli runs one server subcommand against the database and returns its stdout. */
  async cli(...args) {
    try {
      const { stdout } = await run(this.binary, [...this.db.cliArgs, ...args], { timeout: 120_000, maxBuffer: 16 << 20 });
      return stdout;
    } catch (err) {
      throw new Error(`server ${args.join(' ')} failed (exit ${err.code}): ${err.stderr || err.message}`);
    }
  }

  /** start builds, creates and loads the database, and serves; records is the JSON Lines content. */
  async start(records) {
    this.dir = await mkdtemp(join(tmpdir(), 'sdk-contract-'));
    this.binary = join(this.dir, 'server');
    await buildServer(repoRoot, this.binary);

    await this.db.create();
    await this.cli('migrate');
    const file = join(this.dir, 'messages.jsonl');
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    await this.cli('import', '--file', file);

    ({ proc: this.proc, baseURL: this.baseURL, logs: this.logs } = await serve(this.binary,
      ['--database-url', this.databaseURL, '--app-env', 'production'],
      { serveArgs: ['--rate-limit', '100000', '--rate-burst', '100000'] }));
  }

  /** apiKey creates a key for an environment and returns it. */
  async apiKey(environmentID, name) {
    const out = (await this.cli('apikey', 'create', '--environment-id', environmentID, '--name', name)).trim();
    // "applicationIdentifier: <id>", then the key alone on the last line.
    const key = out.split('\n').at(-1);
    if (!/^\S+$/.test(key)) throw new Error(`apikey create printed ${JSON.stringify(out)}, not a key on its last line`);
    return key;
  }

  /** revokeKey revokes the key created under the given (unique) name. */
  async revokeKey(environmentID, name) {
    const list = await this.cli('apikey', 'list', '--environment-id', environmentID);
    // ID, ENVIRONMENT, APPLICATION, NAME, ...: the name by its column in the header.
    const lines = list.split('\n').map((l) => l.trim().split(/\s+/));
    const nameCol = lines[0].indexOf('NAME');
    const row = lines.find((cols) => cols[1] === environmentID && cols[nameCol] === name);
    if (!row) throw new Error(`apikey list has no key named ${name}:\n${list}`);
    await this.cli('apikey', 'revoke', row[0]);
  }

  /** sql runs statements in the server's database, as another program writing to it would. */
  async sql(statement) {
    return this.db.sql(statement);
  }

  /** stop kills the server, drops the database and removes the build. */
  async stop() {
    await stopServer(this.proc);
    try {
      await this.db.drop();
    } finally {
      if (this.dir) await rm(this.dir, { recursive: true, force: true });
    }
  }
}
