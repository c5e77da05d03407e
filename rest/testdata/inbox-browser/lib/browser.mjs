// Debian's Chromium, launched as the repository's other browser suite launches it
// (graph/testdata/browser/lib/browser.mjs): headless, with the flags that keep it from
// reaching for the network, in a fresh profile, every request recorded and anything that
// would leave the machine refused.

import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** loopback tells whether a URL stays on this machine (or inside the page). */
export function loopback(url) {
  const u = new URL(url);
  if (['data:', 'blob:', 'about:'].includes(u.protocol)) return true;
  return ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

/**
 * launch starts Chromium in a fresh profile. Every URL the browser asks for is pushed to
 * requests; a request for another host is aborted (and stays in requests, for the test
 * to report). It fails, never skips, when Chromium is missing.
 */
export async function launch(requests) {
  if (!existsSync(chromiumPath)) {
    throw new Error(`${chromiumPath} is missing: install Debian's Chromium (apt-get install -y chromium); ` +
      'this suite never downloads a browser');
  }
  const profile = await mkdtemp(join(tmpdir(), 'inbox-browser-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath, headless: true, args: chromiumArgs, timeout: 60_000,
  });
  context.on('request', (req) => requests.push(req.url()));
  await context.route((url) => !loopback(url.href), (route) => route.abort('blockedbyclient'));
  const close = async () => {
    await context.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
  };
  return { context, close };
}

/** waitFor polls until check() is truthy (awaited) or the time is up, and returns its value. */
export async function waitFor(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
