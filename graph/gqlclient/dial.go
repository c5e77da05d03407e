package gqlclient

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// DialOptions are Dial's settings and the ones it leaves at their defaults.
type DialOptions struct {
	// Header is sent with the upgrade request.
	Header http.Header
	// Payload is connection_init's payload (the credential).
	Payload map[string]any
	// HTTPClient makes the upgrade request; its transport's dialer decides the socket's
	// options (a load generator shrinks the receive buffer of a client that stops
	// reading). Nil: http.DefaultClient.
	HTTPClient *http.Client
}

// DialWith is Dial with every setting of o.
func DialWith(ctx context.Context, url string, o DialOptions) (*Conn, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}, HTTPHeader: o.Header, HTTPClient: o.HTTPClient})
	if err != nil {
		return nil, err
	}
	return handshake(ctx, ws, o.Payload)
}
