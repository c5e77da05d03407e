// The two published SDKs, configured the way their READMEs say, pointed at the server
// under test. The generated SDK gets an HTTP client that also keeps each raw answer, so
// tests can compare the exact JSON the server sent with what either SDK made of it.

import { Novu as ApiNovu } from '@novu/api';
import { HTTPClient } from '@novu/api/lib/http.js';
import NodeSDK from '@novu/node';

const { Novu: NodeNovu } = NodeSDK;

/**
 * apiClient returns the generated SDK for a key, and `last()`, the raw exchange (the
 * request with its body; the answer's status, headers, text and JSON) of its latest
 * request. Retries are off: the SDK would otherwise back off for up to an hour on a 409,
 * 429 or 5xx, hiding the answer.
 */
export function apiClient(serverURL, secretKey) {
  const exchanges = [];
  const sent = new WeakMap();
  const httpClient = new HTTPClient();
  httpClient.addHook('beforeRequest', (req) => {
    sent.set(req, req.clone().text());
  });
  httpClient.addHook('response', async (res, req) => {
    const body = await res.clone().text();
    let json;
    try { json = JSON.parse(body); } catch { json = undefined; }
    const requestBody = await sent.get(req);
    exchanges.push({ method: req.method, url: req.url, requestHeaders: req.headers, requestBody, status: res.status, headers: res.headers, body, json });
  });
  const novu = new ApiNovu({ secretKey, serverURL, httpClient, retryConfig: { strategy: 'none' } });
  return { novu: explained(novu), exchanges, last: () => exchanges[exchanges.length - 1] };
}

/**
 * explained wraps the SDK so that a ResponseValidationError (the SDK refusing the
 * server's answer) says which fields failed, once per field path, instead of only
 * "Response validation failed".
 */
function explained(sdk) {
  return new Proxy(sdk, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value === 'function') {
        return (...args) => {
          const out = value.apply(target, args);
          return out && typeof out.then === 'function' ? out.then(undefined, (err) => { throw explain(err); }) : out;
        };
      }
      if (value && typeof value === 'object' && '_options' in value) return explained(value);
      return value;
    },
  });
}

/** leafIssues flattens zod issues; of a union's branches it keeps the one that got furthest. */
function leafIssues(issues) {
  return issues.flatMap((issue) => {
    if (issue.code !== 'invalid_union' || !issue.unionErrors?.length) return [issue];
    const branches = issue.unionErrors.map((e) => leafIssues(e.issues));
    const deeper = branches.filter((b) => b.every((i) => i.path.length > issue.path.length));
    return (deeper.length ? deeper : branches).sort((a, b) => a.length - b.length)[0];
  });
}

/** explain turns a ResponseValidationError into one listing each failing field path once. */
export function explain(err) {
  if (err?.name !== 'ResponseValidationError' || !Array.isArray(err.cause?.issues)) return err;
  const counts = new Map();
  for (const issue of leafIssues(err.cause.issues)) {
    const path = issue.path.map((k) => (typeof k === 'number' ? '[]' : `.${k}`)).join('').replace(/^\./, '');
    const line = `${path}: ${issue.message}`;
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  const lines = [...counts].map(([line, n]) => `  ${line}${n > 1 ? ` (x${n})` : ''}`);
  const out = new Error(`@novu/api refused the server's ${err.statusCode} answer (${counts.size} field problems):\n${lines.join('\n')}`, { cause: err });
  out.name = 'ResponseValidationError';
  return out;
}

/** nodeClient returns the axios-based SDK for a key; `requests` collects the URLs it asked for. */
export function nodeClient(serverURL, secretKey) {
  const novu = new NodeNovu(secretKey, { backendUrl: serverURL });
  const requests = [];
  novu.http.interceptors.request.use((config) => {
    requests.push(novu.http.getUri(config));
    return config;
  });
  return { novu, requests };
}

/** settle runs an SDK call and returns either its value or the error it threw. */
export async function settle(promise) {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}
