// The server under test: built from this checkout, run against a MariaDB database of its
// own that is created for the run and dropped after it, loaded through the server's own
// CLI (migrate, import, apikey create).

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root: this directory is rest/testdata/sdk/lib. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

const mariadbHost = '127.0.0.1';
const mariadbPort = 3306;

/** which finds an executable on PATH, then in the given fallbacks. */
function which(names, fallbacks = []) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of names) {
      const p = join(dir, name);
      if (existsSync(p)) return p;
    }
  }
  return fallbacks.find((p) => existsSync(p));
}

/** sql runs statements with the MariaDB client as root, failing loudly when it cannot connect. */
async function sql(statement) {
  const client = which(['mariadb', 'mysql']);
  if (!client) throw new Error('neither the mariadb nor the mysql client is on PATH; the suite needs MariaDB at 127.0.0.1:3306');
  try {
    await run(client, ['-h', mariadbHost, '-P', String(mariadbPort), '-u', 'root', '--batch', '-e', statement], { timeout: 30_000 });
  } catch (err) {
    throw new Error(`MariaDB at ${mariadbHost}:${mariadbPort} (root, no password) refused "${statement}": ${err.stderr || err.message}`);
  }
}

/** freePort asks the kernel for a port nobody listens on. */
function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/**
 * Server is one running instance with its database. start() does everything up to a
 * ready server; stop() undoes whatever start() got to, and is safe to call after a
 * failed start.
 */
export class Server {
  constructor() {
    this.dbName = `sdk_${randomBytes(6).toString('hex')}`;
    this.databaseURL = `mysql://root@${mariadbHost}:${mariadbPort}/${this.dbName}`;
    this.dbCreated = false;
    this.proc = null;
    this.logs = [];
    this.dir = null;
    this.baseURL = null;
  }

  /** cli runs one server subcommand against the database and returns its stdout. */
  async cli(...args) {
    try {
      const { stdout } = await run(this.binary, ['--database-url', this.databaseURL, ...args], { timeout: 120_000, maxBuffer: 16 << 20 });
      return stdout;
    } catch (err) {
      throw new Error(`server ${args.join(' ')} failed (exit ${err.code}): ${err.stderr || err.message}`);
    }
  }

  /** start builds, creates and loads the database, and serves; records is the JSON Lines content. */
  async start(records) {
    this.dir = await mkdtemp(join(tmpdir(), 'sdk-contract-'));
    this.binary = join(this.dir, 'server');
    const go = which(['go'], ['/usr/local/go/bin/go']);
    if (!go) throw new Error('go is not on PATH (nor at /usr/local/go/bin/go)');
    try {
      await run(go, ['build', '-o', this.binary, './cmd/server'], { cwd: repoRoot, timeout: 600_000, maxBuffer: 16 << 20 });
    } catch (err) {
      throw new Error(`go build ./cmd/server failed: ${err.stderr || err.message}`);
    }

    await sql(`CREATE DATABASE \`${this.dbName}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    this.dbCreated = true;
    await this.cli('migrate');
    const file = join(this.dir, 'messages.jsonl');
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    await this.cli('import', '--file', file);

    const port = await freePort();
    this.baseURL = `http://127.0.0.1:${port}`;
    this.proc = spawn(this.binary, [
      '--database-url', this.databaseURL, '--app-env', 'production',
      'serve', '--addr', `127.0.0.1:${port}`,
      '--rate-limit', '100000', '--rate-burst', '100000', '--count-cache-ttl', '0',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk) => {
      this.logs.push(chunk.toString());
      if (this.logs.length > 200) this.logs.shift();
    };
    this.proc.stdout.on('data', keep);
    this.proc.stderr.on('data', keep);
    let exited = null;
    this.proc.on('exit', (code, signal) => { exited = { code, signal }; });
    process.once('exit', () => this.proc?.kill('SIGKILL'));

    const deadline = Date.now() + 60_000;
    for (;;) {
      if (exited) throw new Error(`server exited (${JSON.stringify(exited)}) before it was ready:\n${this.logs.join('')}`);
      try {
        const res = await fetch(`${this.baseURL}/readyz`);
        if (res.status === 200) return;
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) throw new Error(`GET /readyz did not answer 200 within 60 s:\n${this.logs.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** apiKey creates a key for an environment and returns it. */
  async apiKey(environmentID, name) {
    const key = (await this.cli('apikey', 'create', '--environment-id', environmentID, '--name', name)).trim();
    if (!/^\S+$/.test(key)) throw new Error(`apikey create printed ${JSON.stringify(key)}, not one key`);
    return key;
  }

  /** revokeKey revokes the key created under the given (unique) name. */
  async revokeKey(environmentID, name) {
    const list = await this.cli('apikey', 'list', '--environment-id', environmentID);
    const row = list.split('\n').map((l) => l.trim().split(/\s+/)).find((cols) => cols[1] === environmentID && cols[2] === name);
    if (!row) throw new Error(`apikey list has no key named ${name}:\n${list}`);
    await this.cli('apikey', 'revoke', row[0]);
  }

  /** stop kills the server, drops the database and removes the build. */
  async stop() {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) {
      const gone = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    }
    try {
      if (this.dbCreated) await sql(`DROP DATABASE IF EXISTS \`${this.dbName}\``);
    } finally {
      if (this.dir) await rm(this.dir, { recursive: true, force: true });
    }
  }
}
