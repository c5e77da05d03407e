// The server under test: built from a checkout (REPO_ROOT, default this repository) and
// run in development mode in a fresh temporary directory, so that it creates its default
// embedded database there, loads the demo data and keeps the demo key in ./data.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildServer, run, serve, stopServer } from '../../../../rest/testdata/sdk/lib/process.mjs';

/** The checkout to build: REPO_ROOT, or this repository (this directory is graph/testdata/browser/lib). */
export const repoRoot = resolve(process.env.REPO_ROOT || join(dirname(fileURLToPath(import.meta.url)), '../../../..'));

/**
 * Server is one running instance. start() builds and serves and returns once /readyz
 * answers 200; stop() undoes whatever start() got to, and is safe after a failed start.
 */
export class Server {
  constructor() {
    this.dir = null;
    this.binary = null;
    this.env = null;
    this.proc = null;
    this.logs = [];
    this.baseURL = null;
    this.apiKey = null;
  }

  async start() {
    this.dir = await mkdtemp(join(tmpdir(), 'playground-browser-'));
    this.binary = join(this.dir, 'server');
    await buildServer(repoRoot, this.binary);
    // The demo environment is loaded only into the default database (./data/messages.db),
    // so the server gets no database URL and a working directory of its own.
    this.env = { ...process.env, APP_ENV: 'development' };
    delete this.env.DATABASE_URL;
    ({ proc: this.proc, baseURL: this.baseURL, logs: this.logs } = await serve(this.binary, [], { cwd: this.dir, env: this.env }));
    const keyFile = join(this.dir, 'data', 'demo-api-key');
    try {
      this.apiKey = (await readFile(keyFile, 'utf8')).trim();
    } catch (err) {
      throw new Error(`the server wrote no demo key to ${keyFile} (${err.code}):\n${this.logs.join('')}`);
    }
  }

  /**
   * import loads messages (records in the REST shape, with embedded subscriber and
   * template) into the running server's database with `server import`, another process
   * writing the same SQLite file, as the platform's own writers do.
   */
  async import(records) {
    const file = join(this.dir, `import-${Date.now()}.jsonl`);
    await writeFile(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    try {
      await run(this.binary, ['import', '--file', file], { cwd: this.dir, env: this.env, timeout: 60_000 });
    } catch (err) {
      throw new Error(`server import failed: ${err.stderr || err.message}`);
    }
  }

  async stop() {
    await stopServer(this.proc);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
