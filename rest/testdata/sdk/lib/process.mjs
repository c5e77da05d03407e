// Building and running the server binary, for every Node suite of the repository (the
// SDK contract suite here, the GraphQL client and browser suites under graph/testdata):
// only Node builtins, so any suite can import it by relative path.

import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);

/** which finds an executable on PATH, then in the given fallbacks. */
export function which(names, fallbacks = []) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of names) {
      const p = join(dir, name);
      if (existsSync(p)) return p;
    }
  }
  return fallbacks.find((p) => existsSync(p));
}

/** freePort asks the kernel for a loopback port nobody listens on. */
export function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/** buildServer builds ./cmd/server of the checkout at repoRoot into binary. */
export async function buildServer(repoRoot, binary) {
  const go = which(['go'], ['/usr/local/go/bin/go']);
  if (!go) throw new Error('go is not on PATH (nor at /usr/local/go/bin/go)');
  try {
    await run(go, ['build', '-o', binary, './cmd/server'], { cwd: repoRoot, timeout: 600_000, maxBuffer: 16 << 20 });
  } catch (err) {
    throw new Error(`go build ./cmd/server in ${repoRoot} failed: ${err.stderr || err.message}`);
  }
}

/**
 * serve starts `binary ...args` with `serve --addr` on a free loopback port and returns
 * once GET /readyz answers 200: { proc, baseURL, logs } (the last 200 chunks of output,
 * for error messages). It fails with the output when the server exits or is not ready
 * within 60 s.
 */
export async function serve(binary, args, options = {}) {
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const proc = spawn(binary, [...args, 'serve', '--addr', `127.0.0.1:${port}`, ...(options.serveArgs ?? [])],
    { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs = [];
  const keep = (chunk) => {
    logs.push(chunk.toString());
    if (logs.length > 200) logs.shift();
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  let exited = null;
  proc.on('exit', (code, signal) => { exited = { code, signal }; });
  process.once('exit', () => proc.kill('SIGKILL'));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`server exited (${JSON.stringify(exited)}) before it was ready:\n${logs.join('')}`);
    try {
      const res = await fetch(`${baseURL}/readyz`);
      if (res.status === 200) return { proc, baseURL, logs };
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`GET /readyz did not answer 200 within 60 s:\n${logs.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** stopServer ends proc with SIGTERM (SIGKILL after 5 s) and waits for it. */
export async function stopServer(proc) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
  await gone;
  clearTimeout(timer);
}
