// What the setup test hands the suites: the server's base URL and its /graphql URL, an API
// key of environment A, and the fixture's names for the records the suites use.

/** @type {{ url: string, graphqlURL: string, key: string }} */
export const ctx = {};

/** running is every suite's before hook: without a server, its tests cannot run. */
export function running() {
  if (!ctx.url) throw new Error('no server: the setup test failed');
}

/** authorized returns fetch's init with the API key added to whatever headers it had. */
export function authorized(init = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `ApiKey ${ctx.key}`);
  return { ...init, headers };
}

/** fetchWithKey is fetch with the API key: the one way the suites reach the server raw. */
export const fetchWithKey = (input, init) => fetch(input, authorized(init));
