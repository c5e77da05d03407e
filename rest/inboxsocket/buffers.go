package inboxsocket

import (
	"bufio"
	"net"
	"net/http"
)

// socketBufferSize is the size of an inbox socket's read and write buffers. The
// WebSocket keeps the buffers its connection is handed for as long as it lives; net/http
// hands a hijacked connection 4 KB for each, half of what an idle socket held. The
// client sends "ping" and the server a few events a minute, and what does not fit
// passes through (bufio reads and writes larger slices directly).
const socketBufferSize = 512

// smallBuffers is w, whose hijacked connection gets buffers of socketBufferSize.
type smallBuffers struct{ http.ResponseWriter }

// Unwrap is the ResponseWriter beneath, for http.ResponseController.
func (w smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack takes over the connection as net/http does, with smaller buffers. Bytes the
// client sent after its request, already in net/http's read buffer, keep that buffer.
func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return conn, brw, err
	}
	r, wr := brw.Reader, brw.Writer
	if r.Buffered() == 0 {
		r = bufio.NewReaderSize(conn, socketBufferSize)
	}
	if wr.Buffered() == 0 {
		wr = bufio.NewWriterSize(conn, socketBufferSize)
	}
	return conn, bufio.NewReadWriter(r, wr), nil
}
