// Package loopback keeps the load generator on this machine: it refuses any URL or
// address that is not loopback, when the command line is read and again when a
// connection is made, and makes the HTTP clients that connect nowhere else.
package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// CheckURL refuses a base URL whose host is not loopback: an http(s) URL naming
// localhost, an address in 127.0.0.0/8, or ::1. Names other than localhost are refused
// even when they would resolve to loopback, so what is loaded is plain from the URL.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: the scheme must be http or https", raw)
	}
	if u.User != nil || u.Opaque != "" {
		return fmt.Errorf("%q: a base URL has no user or opaque part", raw)
	}
	return CheckHost(u.Hostname())
}

// CheckDatabaseURL refuses a mysql:// URL whose host is not loopback.
func CheckDatabaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "mysql" {
		return errors.New("must be mysql://user:pass@127.0.0.1:3306/db")
	}
	return CheckHost(u.Hostname())
}

// CheckHost refuses a host other than localhost or a loopback address.
func CheckHost(host string) error {
	if host == "" {
		return errors.New("the URL has no host")
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not loopback: only localhost, 127.0.0.0/8 and ::1 may be loaded", host)
}

// DialControl refuses, at connect time, any address that is not loopback: the last
// guard, should a name resolve elsewhere. It is a net.Dialer's Control.
func DialControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to connect to %s: not loopback", address)
	}
	return nil
}

// NewHTTPClient returns a client for concurrency workers: keep-alive connections, one per
// worker, no proxy, no redirects, loopback connections only.
func NewHTTPClient(concurrency int, timeout time.Duration, gzip bool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: DialControl}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        concurrency * 2,
		MaxIdleConnsPerHost: concurrency * 2,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  !gzip,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
