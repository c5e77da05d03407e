// The server under test: built from this checkout, on a MariaDB database of its own that
// is created for the run and dropped after it, loaded through the server's own CLI
// (migrate, import, apikey create), with API keys sealed under a secret so the inbox
// client's subscriberHash can be checked.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Database } from '../../sdk/lib/database.mjs';
import { buildServer, run, serve, stopServer } from '../../sdk/lib/process.mjs';

/** The repository root: this directory is rest/testdata/inbox/lib. */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The browser origin the server allows, for the CORS checks. */
export const allowedOrigin = 'https://app.example.com';

/**
 * Server is one running instance with its database; stop() undoes whatever start() got
 * to. origins are the browser origins it allows (allowedOrigin unless given).
 */
export class Server {
  constructor({ origins = [allowedOrigin] } = {}) {
    this.origins = origins;
    this.db = new Database('inbox');
    this.databaseURL = this.db.url;
    this.env = { ...process.env, API_KEY_SECRET: randomBytes(32).toString('hex') };
    this.proc = null;
    this.dir = null;
    this.baseURL = null;
  }

  async cli(...args) {
    return this.cliWithin(120_000, ...args);
  }

  /** cliWithin is cli with its own bound, in milliseconds. */
  async cliWithin(timeout, ...args) {
    try {
      const { stdout } = await run(this.binary, [...this.db.cliArgs, ...args],
        { timeout, maxBuffer: 16 << 20, env: this.env });
      return stdout;
    } catch (err) {
      throw new Error(`server ${args.join(' ')} failed (exit ${err.code}): ${err.stderr || err.message}`);
    }
  }

  /** start builds, creates and loads the database (records: import's JSON Lines), and serves. */
  async start(records) {
    this.dir = await mkdtemp(join(tmpdir(), 'inbox-client-'));
    this.binary = join(this.dir, 'server');
    await buildServer(repoRoot, this.binary);
    await this.db.create();
    await this.cli('migrate');
    const file = join(this.dir, 'messages.jsonl');
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    await this.cli('import', '--file', file);
    ({ proc: this.proc, baseURL: this.baseURL } = await serve(this.binary,
      ['--database-url', this.databaseURL, '--app-env', 'production'],
      {
        env: this.env,
        serveArgs: ['--rate-limit', '100000', '--rate-burst', '100000', '--session-rate-limit', '100000',
          '--session-rate-burst', '100000', '--cors-allowed-origins', this.origins.join(',')],
      }));
  }

  /** sql runs statement on the server's database with the mariadb client: a writer that is not this server. */
  async sql(statement) {
    await this.db.sql(statement);
  }

  /** scalar is the one number a query of the server's database answers, read with the mariadb client. */
  async scalar(statement) {
    return Number((await this.db.sql(statement)).trim());
  }

  /** import loads more records with the server's import, in another process, within timeout milliseconds. */
  async import(records, timeout = 120_000) {
    const file = join(this.dir, `more-${randomBytes(4).toString('hex')}.jsonl`);
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    try {
      await this.cliWithin(timeout, 'import', '--file', file);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** apiKey creates a key for an environment: { key, app } (its applicationIdentifier). */
  async apiKey(environmentID, name) {
    const out = (await this.cli('apikey', 'create', '--environment-id', environmentID, '--name', name)).trim();
    const app = /^applicationIdentifier: (\S+)$/m.exec(out)?.[1];
    const key = out.split('\n').at(-1);
    if (!app || !/^\S+$/.test(key)) throw new Error(`apikey create printed ${JSON.stringify(out)}`);
    return { key, app };
  }

  async stop() {
    await stopServer(this.proc);
    try {
      await this.db.drop();
    } finally {
      if (this.dir) await rm(this.dir, { recursive: true, force: true });
    }
  }
}
