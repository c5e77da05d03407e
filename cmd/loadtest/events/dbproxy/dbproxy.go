// Package dbproxy is `loadtest events proxy`: a TCP relay between one server instance
// and MariaDB that counts that instance's commands and the bytes sent back, with the
// counts as JSON on a stats address.
//
// The database's own counters (SHOW GLOBAL STATUS) add up every client of the database
// server: on a shared machine, other programs' queries land in them too. Counted here,
// "the database work does not grow with subscriptions" is read off one instance's
// traffic.
package dbproxy

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/loopback"
)

// MySQL client commands (the first byte of a command packet).
const (
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
)

// counters are what one proxy saw, over all its connections.
type counters struct {
	Commands          atomic.Int64 // every command packet
	Queries           atomic.Int64 // COM_QUERY: a statement sent as text
	Prepares          atomic.Int64 // COM_STMT_PREPARE
	Executes          atomic.Int64 // COM_STMT_EXECUTE: a prepared statement run
	BytesFromDatabase atomic.Int64 // everything MariaDB sent back (rows, mostly)
}

// Snapshot is what a proxy has counted so far, as its stats address answers it.
type Snapshot struct {
	Commands          int64 `json:"commands"`
	Queries           int64 `json:"queries"`
	Prepares          int64 `json:"prepares"`
	Executes          int64 `json:"executes"`
	BytesFromDatabase int64 `json:"bytesFromDatabase"`
}

func (c *counters) snapshot() Snapshot {
	return Snapshot{Commands: c.Commands.Load(), Queries: c.Queries.Load(), Prepares: c.Prepares.Load(),
		Executes: c.Executes.Load(), BytesFromDatabase: c.BytesFromDatabase.Load()}
}

// Statements is what the database executed: text queries and prepared executions.
func (s Snapshot) Statements() int64 { return s.Queries + s.Executes }

// commandCounter follows the client-to-server half of a MySQL connection: packets of a
// 3-byte little-endian length, a sequence id and the payload. A packet with sequence id
// 0 begins a command, whose first payload byte says which. (Handshake packets from the
// client have sequence ids from 1; no TLS and no compression, as the server connects.)
type commandCounter struct {
	counts    *counters
	header    [4]byte
	have      int // header bytes read
	remaining int // payload bytes of the current packet not yet seen
	command   bool
}

// Write feeds the bytes the client sent.
func (c *commandCounter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if c.remaining == 0 && c.have < 4 {
			k := copy(c.header[c.have:], b)
			c.have += k
			b = b[k:]
			if c.have < 4 {
				break
			}
			c.remaining = int(c.header[0]) | int(c.header[1])<<8 | int(c.header[2])<<16
			c.command = c.header[3] == 0 && c.remaining > 0
			if c.remaining == 0 {
				c.have = 0
			}
			continue
		}
		if c.command {
			c.count(b[0])
			c.command = false
		}
		k := min(len(b), c.remaining)
		c.remaining -= k
		b = b[k:]
		if c.remaining == 0 {
			c.have = 0
		}
	}
	return n, nil
}

func (c *commandCounter) count(cmd byte) {
	c.counts.Commands.Add(1)
	switch cmd {
	case comQuery:
		c.counts.Queries.Add(1)
	case comStmtPrepare:
		c.counts.Prepares.Add(1)
	case comStmtExecute:
		c.counts.Executes.Add(1)
	}
}

// byteCounter counts what passes through it.
type byteCounter struct{ n *atomic.Int64 }

func (c byteCounter) Write(b []byte) (int, error) { c.n.Add(int64(len(b))); return len(b), nil }

// Command is `loadtest events proxy`: a counting TCP proxy to MariaDB, for one server
// instance, with its counts as JSON on --stats.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "proxy",
		Usage: "relay one server's MariaDB connections and count its commands (JSON on --stats); loopback only",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "address the server connects to instead of MariaDB", Value: "127.0.0.1:13306"},
			&cli.StringFlag{Name: "upstream", Usage: "MariaDB's address", Value: "127.0.0.1:3306"},
			&cli.StringFlag{Name: "stats", Usage: "address of the counts: GET / answers JSON", Value: "127.0.0.1:13307"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			for _, a := range []string{cmd.String("listen"), cmd.String("upstream"), cmd.String("stats")} {
				host, _, err := net.SplitHostPort(a)
				if err != nil {
					return cmdline.Usage(err)
				}
				if err := loopback.CheckHost(host); err != nil {
					return cmdline.Usage(err)
				}
			}
			return Run(ctx, cmd.String("listen"), cmd.String("upstream"), cmd.String("stats"))
		},
	}
}

// Run relays connections from listen to upstream until ctx ends, and answers the counts
// as JSON at GET / on stats.
func Run(ctx context.Context, listen, upstream, stats string) error {
	counts := &counters{}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	statsLn, err := net.Listen("tcp", stats)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(counts.snapshot())
	})}
	go func() { _ = srv.Serve(statsLn) }()
	go func() {
		<-ctx.Done()
		_ = ln.Close()
		_ = srv.Close()
	}()
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: loopback.DialControl}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		client, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			relay(ctx, client, dialer, upstream, counts)
		}()
	}
}

// relay joins one client connection to a new upstream connection, counting both ways.
func relay(ctx context.Context, client net.Conn, dialer *net.Dialer, upstream string, counts *counters) {
	defer client.Close()
	server, err := dialer.DialContext(ctx, "tcp", upstream)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(io.MultiWriter(server, &commandCounter{counts: counts}), client)
		closeWrite(server)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(io.MultiWriter(client, byteCounter{&counts.BytesFromDatabase}), server)
		closeWrite(client)
		done <- struct{}{}
	}()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
