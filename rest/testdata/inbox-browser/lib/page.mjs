// The customer's page, on an origin of its own: page/index.html and page/main.jsx bundled
// with esbuild (pinned) from node_modules, served by a plain Node http server on another
// loopback port than the API. Nothing comes from a CDN.

import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const pageDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'page');

/** bundle builds page/main.jsx and what it imports into one browser script. */
async function bundle() {
  const out = await build({
    entryPoints: [join(pageDir, 'main.jsx')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  return out.outputFiles[0].contents;
}

/** PageOrigin serves the page at / and its bundle at /main.js; requests keeps "METHOD path". */
export class PageOrigin {
  constructor() {
    this.server = null;
    this.origin = null;
    this.requests = [];
  }

  /** start bundles the page and listens on a free port of 127.0.0.1, named localhost in its origin. */
  async start() {
    const files = {
      '/': { type: 'text/html; charset=utf-8', body: await readFile(join(pageDir, 'index.html')) },
      '/main.js': { type: 'text/javascript; charset=utf-8', body: await bundle() },
    };
    this.server = createServer((req, res) => {
      this.requests.push(`${req.method} ${req.url}`);
      const file = files[new URL(req.url, 'http://x').pathname];
      if (req.method !== 'GET' || !file) {
        res.writeHead(req.method !== 'GET' ? 405 : 404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-store' }).end(file.body);
    });
    await new Promise((ok, fail) => {
      this.server.once('error', fail);
      this.server.listen(0, '127.0.0.1', ok);
    });
    this.origin = `http://localhost:${this.server.address().port}`;
  }

  async stop() {
    if (!this.server?.listening) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
