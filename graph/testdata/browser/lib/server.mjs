// The server under test: built from a checkout (REPO_ROOT, default this repository) and
// run in development mode in a fresh temporary directory, so that it creates its default
// embedded database there, loads the demo data and keeps the demo key in ./data.

import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The checkout to build: REPO_ROOT, or this repository (this directory is graph/testdata/browser/lib). */
export const repoRoot = resolve(process.env.REPO_ROOT || join(dirname(fileURLToPath(import.meta.url)), '../../../..'));

/** which finds an executable on PATH, then in the given fallbacks. */
function which(name, fallbacks = []) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return fallbacks.find((p) => existsSync(p));
}

/** freePort asks the kernel for a loopback port nobody listens on. */
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
 * Server is one running instance. start() builds and serves and returns once /readyz
 * answers 200; stop() undoes whatever start() got to, and is safe after a failed start.
 */
export class Server {
  constructor() {
    this.dir = null;
    this.proc = null;
    this.logs = [];
    this.baseURL = null;
    this.apiKey = null;
  }

  async start() {
    this.dir = await mkdtemp(join(tmpdir(), 'playground-browser-'));
    const binary = join(this.dir, 'server');
    const go = which('go', ['/usr/local/go/bin/go']);
    if (!go) throw new Error('go is not on PATH (nor at /usr/local/go/bin/go)');
    try {
      await run(go, ['build', '-o', binary, './cmd/server'], { cwd: repoRoot, timeout: 600_000, maxBuffer: 16 << 20 });
    } catch (err) {
      throw new Error(`go build ./cmd/server in ${repoRoot} failed: ${err.stderr || err.message}`);
    }

    const port = await freePort();
    this.baseURL = `http://127.0.0.1:${port}`;
    // The demo environment is loaded only into the default database (./data/messages.db),
    // so the server gets no database URL and a working directory of its own.
    const env = { ...process.env, APP_ENV: 'development' };
    delete env.DATABASE_URL;
    this.proc = spawn(binary, ['serve', '--addr', `127.0.0.1:${port}`], { cwd: this.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
        if (res.status === 200) break;
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) throw new Error(`GET /readyz did not answer 200 within 60 s:\n${this.logs.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const keyFile = join(this.dir, 'data', 'demo-api-key');
    try {
      this.apiKey = (await readFile(keyFile, 'utf8')).trim();
    } catch (err) {
      throw new Error(`the server wrote no demo key to ${keyFile} (${err.code}):\n${this.logs.join('')}`);
    }
  }

  async stop() {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) {
      const gone = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    }
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
