// What the setup hook hands the suites: the server's base URL, one API key per
// environment (and a revoked one), and an SDK client of each kind per environment.

/**
 * @type {{ url: string, keyA: string, keyB: string, revokedKey: string,
 *   apiA: ReturnType<typeof import('./clients.mjs').apiClient>,
 *   apiB: ReturnType<typeof import('./clients.mjs').apiClient>,
 *   nodeA: ReturnType<typeof import('./clients.mjs').nodeClient>,
 *   nodeB: ReturnType<typeof import('./clients.mjs').nodeClient>,
 *   sql: (statement: string) => Promise<void> }}
 */
export const ctx = {};

/** ids returns the _id of each raw message of a list answer, in order. */
export const ids = (list) => list.map((m) => m._id ?? m.id);

/** running is every suite's before hook: without a server, its tests cannot run. */
export function running() {
  if (!ctx.url) throw new Error('no server: the setup test failed');
}
