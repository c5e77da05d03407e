package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"messages/graph/gqlclient"
)

// A socket the poller reads keeps the transport's bounds that a goroutine reading it
// kept: a message over the read limit closes it with 1009, bytes sent before the
// handshake's answer with 4400, a client that answers no ping with 1008; one that answers
// stays open and served; and its connection counts against its address until it closes.
func TestDoorsPolledSockets(t *testing.T) {
	w := newDoorsWorld(t, "--websocket-ping", "1s", "--max-connections-per-address", "3")
	init := fmt.Sprintf(`{"type":"connection_init","payload":{"Authorization":"ApiKey %s"}}`, w.key)

	t.Run("closedOverTheReadLimit", func(t *testing.T) {
		ws := rawSocket(t, w.srv.base, gqlclient.Subprotocol)
		sendText(t, ws, init)
		// A protocol ping just over the 128 KiB limit, which would be answered within it.
		// The server writes a 1009 close frame and drops the connection at once, so the
		// client sees the 1009 or, when its write is cut, the reset.
		big := `{"type":"ping","payload":"` + strings.Repeat("x", 130<<10) + `"}`
		_ = ws.Write(context.Background(), websocket.MessageText, []byte(big))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for {
			_, data, err := ws.Read(ctx)
			if err == nil {
				if strings.Contains(string(data), "pong") {
					t.Fatal("a message over the read limit was answered")
				}
				continue
			}
			if ctx.Err() != nil {
				t.Fatal("the socket is still open after a message over the read limit")
			}
			if code := websocket.CloseStatus(err); code != -1 && code != websocket.StatusMessageTooBig {
				t.Fatalf("closed with %v, want 1009", err)
			}
			return
		}
	})

	t.Run("4400BeforeTheHandshakesAnswer", func(t *testing.T) {
		addr := strings.TrimPrefix(w.srv.base, "http://")
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// The upgrade request and, in the same write, a masked text frame.
		frame := maskedText([]byte(init))
		fmt.Fprintf(conn, "GET /graphql HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n%s",
			addr, gqlclient.Subprotocol, frame)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(conn)
		status, _ := r.ReadString('\n')
		if !strings.HasPrefix(status, "HTTP/1.1 101") {
			t.Fatalf("upgrade answered %q", status)
		}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
		}
		code, reason := readClose(t, r)
		if code != 4400 || !strings.Contains(reason, "before the handshake") {
			t.Fatalf("closed %d %q, want 4400 naming the early bytes", code, reason)
		}
	})

	t.Run("1008NoPong", func(t *testing.T) {
		ws := rawSocket(t, w.srv.base, gqlclient.Subprotocol)
		sendText(t, ws, init)
		// Not reading, this client answers no ping: two intervals later it is closed.
		time.Sleep(3500 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for {
			_, data, err := ws.Read(ctx)
			if err == nil {
				if !strings.Contains(string(data), "connection_ack") {
					t.Fatalf("unexpected message %s", data)
				}
				continue
			}
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), "no pong") {
				t.Fatalf("socket ended with %v, want 1008 no pong", err)
			}
			return
		}
	})

	t.Run("pongsKeepItOpen", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := gqlclient.Dial(ctx, wsURL(w.srv.base), nil, map[string]any{"Authorization": "ApiKey " + w.key})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		time.Sleep(3500 * time.Millisecond) // three pings, each answered by the reading client
		s, err := c.Subscribe(ctx, gqlclient.Request{Query: `{ __typename }`}, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := <-s.Results()
		if !ok || len(r.Errors) > 0 || !strings.Contains(string(r.Data), "Query") {
			t.Fatalf("a query after three pings: %+v (%v, socket %v)", r, s.Err(), c.Err())
		}
	})

	t.Run("countedAgainstItsAddressUntilClosed", func(t *testing.T) {
		e2eClient.CloseIdleConnections()
		time.Sleep(200 * time.Millisecond) // the earlier subtests' sockets are closed and uncounted
		var held []*gqlclient.Conn
		for range 3 {
			c, err := gqlclient.Dial(context.Background(), wsURL(w.srv.base), nil, map[string]any{"Authorization": "ApiKey " + w.key})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			held = append(held, c)
		}
		// The refusal is written as the connection is accepted, before anything is read:
		// read it on a plain connection (a client writing its request may meet the close).
		fourth, err := net.Dial("tcp", strings.TrimPrefix(w.srv.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer fourth.Close()
		_ = fourth.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, _ := bufio.NewReader(fourth).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 429") {
			t.Fatalf("a fourth connection while three sockets are open got %q, want 429", line)
		}
		_ = held[0].Close()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var c *gqlclient.Conn
			if c, err = gqlclient.Dial(context.Background(), wsURL(w.srv.base), nil, map[string]any{"Authorization": "ApiKey " + w.key}); err == nil {
				_ = c.Close()
				return
			}
		}
		t.Fatalf("after one socket closed, a new one is still refused: %v", err)
	})
}

// maskedText is a client's text frame carrying payload (under 126 bytes).
func maskedText(payload []byte) []byte {
	key := []byte{1, 2, 3, 4}
	b := []byte{0x81, 0x80 | byte(len(payload))}
	b = append(b, key...)
	for i, c := range payload {
		b = append(b, c^key[i%4])
	}
	return b
}

// readClose reads server frames from r until a close frame, and returns its code and
// reason.
func readClose(t *testing.T, r io.Reader) (int, string) {
	t.Helper()
	for {
		var head [2]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			t.Fatalf("reading a frame: %v", err)
		}
		n := int(head[1] & 0x7f)
		switch n {
		case 126:
			var ext [2]byte
			if _, err := io.ReadFull(r, ext[:]); err != nil {
				t.Fatal(err)
			}
			n = int(binary.BigEndian.Uint16(ext[:]))
		case 127:
			t.Fatal("an unexpectedly large frame")
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			t.Fatal(err)
		}
		if head[0]&0x0f == 0x8 && n >= 2 {
			return int(binary.BigEndian.Uint16(payload)), string(payload[2:])
		}
	}
}
