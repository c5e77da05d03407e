// The protocol's reference server for `loadtest idle`: graphql-ws's useServer on ws, with
// its defaults (keep-alive pings every 12 s), serving graphql-transport-ws on /graphql.
// Its messageEvents subscription never yields, so a socket holding one is idle: what it
// costs is the protocol's and the runtime's, nothing of a data source.
//
//   PORT=18291 node server.mjs      (loopback only; any other request answers 200 "ok")
import { createServer } from 'node:http';
import { buildSchema } from 'graphql';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';

const schema = buildSchema(`
  type Query { ok: Boolean }
  type Message { _id: ID! }
  type MessageEvent { kind: String! cursor: String! message: Message! }
  type Subscription { messageEvents(subscriberId: String): MessageEvent! }
`);

// never is an async iterator whose first value never comes; return() ends it when the
// client completes or the socket closes.
function never() {
  let wake;
  const pending = new Promise((resolve) => { wake = resolve; });
  return {
    [Symbol.asyncIterator]() { return this; },
    next: () => pending,
    return: () => { wake({ done: true, value: undefined }); return Promise.resolve({ done: true, value: undefined }); },
  };
}

const roots = { query: { ok: () => true }, subscription: { messageEvents: () => never() } };

const port = Number(process.env.PORT || 18291);
const http = createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); });
const wss = new WebSocketServer({ server: http, path: '/graphql' });
useServer({ schema, roots }, wss);
http.listen(port, '127.0.0.1', () => { console.log(`listening on 127.0.0.1:${port}`); });
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => { wss.close(); http.close(); process.exit(0); });
}
