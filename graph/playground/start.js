// Starts GraphiQL with the configuration the server put in the page's JSON data block
// (a data block, not a script, so the page needs no inline script).
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('playground-config').textContent);

  // The headers of the latest request: the configured ones with the editor's on top.
  var lastHeaders = config.headers;

  // Subscriptions go over a WebSocket to the same endpoint (graphql-transport-ws). A
  // socket has no headers of its own, so connection_init carries the Authorization in
  // effect for the subscription that opened it; being lazy, the socket closes when no
  // subscription runs, and the next one reconnects with the key then in the editor.
  var ws = new URL(config.endpoint, location.href);
  ws.protocol = ws.protocol === 'https:' ? 'wss:' : 'ws:';
  var wsClient = graphqlWs.createClient({
    url: ws.href,
    lazy: true,
    // The server does not ping: the client does, so proxies keep the socket open.
    keepAlive: 20000,
    connectionParams: function () {
      var params = {};
      Object.keys(lastHeaders).forEach(function (n) {
        if (n.toLowerCase() === 'authorization') params.Authorization = lastHeaders[n];
      });
      return params;
    },
  });

  // The configured headers go with every request, the schema's introspection included;
  // a header the user sets in the editor replaces the configured one of the same name.
  // Queries and mutations go over HTTP, subscriptions through wsClient.
  var send = GraphiQL.createFetcher({ url: config.endpoint, wsClient: wsClient });
  function fetcher(params, opts) {
    var headers = {};
    var edited = (opts && opts.headers) || {};
    var names = Object.keys(edited).map(function (n) { return n.toLowerCase(); });
    Object.keys(config.headers).forEach(function (n) {
      if (names.indexOf(n.toLowerCase()) < 0) headers[n] = config.headers[n];
    });
    Object.keys(edited).forEach(function (n) { headers[n] = edited[n]; });
    lastHeaders = headers;
    return send(params, Object.assign({}, opts, { headers: headers }));
  }

  var hasHeaders = Object.keys(config.headers).length > 0;
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: config.defaultQuery,
      defaultHeaders: hasHeaders ? JSON.stringify(config.headers, null, 2) : undefined,
      defaultEditorToolsVisibility: hasHeaders ? 'headers' : false,
    })
  );
})();
