// A second origin: the customer's own web page, served by a plain Node http server on
// another loopback port than the API. It serves the files of one directory and the ESM
// builds of a few npm packages from node_modules, with an import map that names them, so
// the page imports a real client library without a bundler and without a CDN.

import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, relative, resolve, sep } from 'node:path';

const types = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * vendorPackages finds each package (and, recursively, the dependencies it names) as Node
 * would resolve it from here, and returns name -> { dir, entry }, entry being the file
 * its "exports" give to `import`.
 */
async function vendorPackages(names, from = import.meta.url, found = new Map()) {
  const require = createRequire(from);
  for (const name of names) {
    if (found.has(name)) continue;
    const manifestPath = require.resolve(`${name}/package.json`);
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    const root = manifest.exports?.['.'];
    const entry = (typeof root === 'string' ? root : root?.import?.default ?? root?.import) ?? manifest.module;
    if (typeof entry !== 'string') throw new Error(`${name} ${manifest.version} has no ESM entry in its package.json`);
    found.set(name, { dir: dirname(manifestPath), entry: entry.replace(/^\.\//, ''), version: manifest.version });
    await vendorPackages(Object.keys(manifest.dependencies ?? {}), manifestPath, found);
  }
  return found;
}

/** inside resolves path under dir, or gives null when it would leave dir. */
function inside(dir, path) {
  const file = resolve(dir, `.${sep}${path}`);
  const rel = relative(dir, file);
  return rel && !rel.startsWith('..') && !rel.startsWith(sep) ? file : null;
}

/**
 * PageOrigin serves dir at / and each vendored package at /vendor/<name>/. An HTML file's
 * `<!-- importmap -->` becomes the import map of those packages. Every request is kept in
 * `requests` as "METHOD path".
 */
export class PageOrigin {
  constructor(dir, packages) {
    this.dir = dir;
    this.packages = packages;
    this.vendor = null; // name -> { dir, entry, version }
    this.server = null;
    this.origin = null;
    this.requests = [];
  }

  /** start listens on a free port of 127.0.0.1; the page's origin names it `host`. */
  async start(host = 'localhost') {
    this.vendor = await vendorPackages(this.packages);
    const imports = Object.fromEntries([...this.vendor].map(([name, p]) => [name, `/vendor/${name}/${p.entry}`]));
    const importMap = `<script type="importmap">${JSON.stringify({ imports })}</script>`;

    this.server = createServer(async (req, res) => {
      this.requests.push(`${req.method} ${req.url}`);
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = null;
      const vendored = [...this.vendor].find(([name]) => path.startsWith(`/vendor/${name}/`));
      if (vendored) file = inside(vendored[1].dir, path.slice(`/vendor/${vendored[0]}/`.length));
      else file = inside(this.dir, path === '/' ? 'index.html' : path.slice(1));
      if (req.method !== 'GET') {
        res.writeHead(405).end();
        return;
      }
      if (!file || !types[extname(file)]) {
        res.writeHead(404).end();
        return;
      }
      let body;
      try {
        body = await readFile(file);
      } catch {
        res.writeHead(404).end();
        return;
      }
      if (extname(file) === '.html') body = body.toString('utf8').replace('<!-- importmap -->', importMap);
      res.writeHead(200, { 'Content-Type': types[extname(file)], 'Cache-Control': 'no-store' }).end(body);
    });
    await new Promise((ok, fail) => {
      this.server.once('error', fail);
      this.server.listen(0, '127.0.0.1', ok);
    });
    this.origin = `http://${host}:${this.server.address().port}`;
  }

  async stop() {
    if (!this.server?.listening) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
