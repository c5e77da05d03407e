// Package transport serves the operations of /graphql as gqlgen transports: POST and GET
// (http.go; GET answers are revalidated by ETag, httpcache.go), GraphQL over WebSocket
// with the graphql-transport-ws protocol (socket.go), and Server-Sent Events in
// graphql-sse's distinct connections mode (eventstream.go). The two streaming doors pass
// each operation through the Gate, the server's guards, as a request passes them in HTTP
// middleware.
//
// POST and GET answer as the GraphQL-over-HTTP specification says
// (https://graphql.github.io/graphql-over-http/draft/), which gqlgen's own POST and GET
// do not: they answer 422 to a document that does not parse or validate when the client
// accepts application/json, where the specification (and Apollo Client, which reports
// anything but 200 there as a network error) wants 200, and they send "data": null with
// request errors, where no data entry belongs. These pick the status from the negotiated
// media type instead, and write a request error without data:
//
//	                                          application/json   application/graphql-response+json
//	ran (with or without field errors)        200                200
//	refused by GraphQL (parse, validation,    200                400
//	  variables, limits, persisted query)
//	malformed request (body, no query)        400                400
//	mutation over GET                         405                405
//	body over the edge's limit                413                413
//
// POST answers carry Cache-Control: no-store; GET answers are revalidated (httpcache.go).
//
// The package imports gqlgen's graphql package, gqlparser, models, errcode and extension
// (to hand a streamed mutation's idempotency claim to extension.Idempotency), never
// package graph, which composes these transports with its schema.
package transport
