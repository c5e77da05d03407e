// The database a suite's server runs on: a fresh MariaDB database of its own (created,
// then dropped), or, when TEST_VITESS_URL names one (`.ci/vitess up`), the sharded Vitess
// deployment, emptied first: it holds one schema, so suites take turns on it. Both are
// reached with the mariadb client, as a writer that is not the server.

import { randomBytes } from 'node:crypto';

import { run, which } from './process.mjs';

/** client runs statements with the mariadb client against host:port, database db. */
async function client(host, port, db, statement, { columns = true } = {}) {
  const bin = which(['mariadb', 'mysql']);
  if (!bin) throw new Error('neither the mariadb nor the mysql client is on PATH');
  const args = ['-h', host, '-P', String(port), '-u', 'root', '--batch'];
  if (!columns) args.push('--skip-column-names');
  if (db) args.push('-D', db);
  try {
    const { stdout } = await run(bin, [...args, '-e', statement], { timeout: 60_000, maxBuffer: 16 << 20 });
    return stdout;
  } catch (err) {
    throw new Error(`${host}:${port}${db ? '/' + db : ''} (root, no password) refused "${statement.slice(0, 200)}": ${err.stderr || err.message}`);
  }
}

/** hostPortDB splits mysql://root@host:port/db. */
function hostPortDB(url) {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 3306), db: decodeURIComponent(u.pathname.slice(1)) };
}

/** liveVitess counts this process's servers on the Vitess deployment: only the first empties it. */
let liveVitess = 0;

export class Database {
  /** prefix names a MariaDB database of this suite's (prefix_<random>). */
  constructor(prefix) {
    this.vitessURL = process.env.TEST_VITESS_URL || '';
    if (this.vitessURL) {
      this.url = this.vitessURL;
      this.shards = (process.env.TEST_VITESS_SHARD_URLS || '').split(',').filter(Boolean);
      if (this.shards.length === 0) throw new Error('TEST_VITESS_URL is set without TEST_VITESS_SHARD_URLS (.ci/vitess shards)');
    } else {
      this.name = `${prefix}_${randomBytes(6).toString('hex')}`;
      this.url = `mysql://root@127.0.0.1:3306/${this.name}`;
    }
    this.created = false;
  }

  /** cliArgs are the flags every server command needs to reach the database. */
  get cliArgs() {
    const args = ['--database-url', this.url];
    if (this.vitessURL) args.push('--database-shard-urls', this.shards.join(','));
    return args;
  }

  /**
   * create makes the database empty and ready for `migrate`. On Vitess a second server of
   * the same process (a suite starting one with other settings) shares the first's data.
   */
  async create() {
    if (this.vitessURL) {
      if (liveVitess++ === 0) await this.empty();
    } else {
      await client('127.0.0.1', 3306, '', `CREATE DATABASE \`${this.name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    }
    this.created = true;
  }

  /** empty truncates every table on every shard of the Vitess deployment, the migrations' own aside. */
  async empty() {
    for (const pair of this.shards) {
      const { host, port, db } = hostPortDB(pair.slice(pair.indexOf('=') + 1));
      const tables = (await client(host, port, db,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND table_name NOT IN ('goose_db_version', 'schema_migration_lock')",
        { columns: false })).split('\n').filter(Boolean);
      if (tables.length) await client(host, port, db, tables.map((t) => `TRUNCATE TABLE \`${t}\`;`).join(' '));
    }
  }

  /** drop removes what create made: the MariaDB database; Vitess is emptied by the next suite. */
  async drop() {
    if (!this.created) return;
    this.created = false;
    if (this.vitessURL) {
      liveVitess--;
      return;
    }
    await client('127.0.0.1', 3306, '', `DROP DATABASE IF EXISTS \`${this.name}\``);
  }

  /** sql runs statements in the database, through vtgate on Vitess; returns the rows without a header. */
  async sql(statement) {
    const { host, port, db } = hostPortDB(this.url);
    return client(host, port, db, statement, { columns: false });
  }
}
