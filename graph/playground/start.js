// Starts GraphiQL with the configuration the server put in the page's JSON data block
// (a data block, not a script, so the page needs no inline script).
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('playground-config').textContent);

  // The configured headers go with every request, the schema's introspection included;
  // a header the user sets in the editor replaces the configured one of the same name.
  var send = GraphiQL.createFetcher({ url: config.endpoint });
  function fetcher(params, opts) {
    var headers = {};
    var edited = (opts && opts.headers) || {};
    var names = Object.keys(edited).map(function (n) { return n.toLowerCase(); });
    Object.keys(config.headers).forEach(function (n) {
      if (names.indexOf(n.toLowerCase()) < 0) headers[n] = config.headers[n];
    });
    Object.keys(edited).forEach(function (n) { headers[n] = edited[n]; });
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
