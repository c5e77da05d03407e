//go:build !unix

package transport

import "github.com/lesismal/nbio/nbhttp"

// newRelays returns no relay where the poller is not one (nbio reads each connection on
// a goroutine of its own there): the pinger writes every ping itself.
func newRelays(*nbhttp.Engine) ([]*relay, error) { return nil, nil }
