//go:build unix

package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/nbhttp"
)

// relayWake is the byte that wakes a relay's poller.
var relayWake = []byte{1}

// newRelays returns one relay for each poller goroutine of e. The poller of a connection
// is its descriptor modulo their number, so socket pairs are made until each has one.
func newRelays(e *nbhttp.Engine) ([]*relay, error) {
	n := e.NPoller
	relays := make([]*relay, n)
	var spare []int // descriptors that landed on a poller already served, closed at the end
	defer func() {
		for _, fd := range spare {
			_ = syscall.Close(fd)
		}
	}()
	for filled, tries := 0, 0; filled < n; tries++ {
		if tries == 4*n+4 {
			return nil, errors.New("no relay for every poller goroutine")
		}
		fds, err := socketPair()
		if err != nil {
			return nil, fmt.Errorf("relay: %w", err)
		}
		f := os.NewFile(uintptr(fds[0]), "relay")
		conn, err := net.FileConn(f) // a duplicate of the descriptor
		_ = f.Close()
		if err != nil {
			_ = syscall.Close(fds[1])
			return nil, fmt.Errorf("relay: %w", err)
		}
		nbc, err := nbio.NBConn(conn) // another, conn closed
		if err != nil {
			_ = syscall.Close(fds[1])
			return nil, fmt.Errorf("relay: %w", err)
		}
		k := nbc.Hash() % n
		if relays[k] != nil {
			spare = append(spare, nbc.Hash(), fds[1])
			continue
		}
		wake := fds[1]
		r := &relay{wake: func() error {
			_, err := syscall.Write(wake, relayWake)
			if errors.Is(err, syscall.EAGAIN) {
				return nil // bytes are waiting: the poller wakes for them
			}
			return err
		}}
		nbc.OnData(func(*nbio.Conn, []byte) { r.drain() })
		if _, err := e.AddConn(nbc); err != nil {
			_ = syscall.Close(fds[1])
			return nil, fmt.Errorf("relay: %w", err)
		}
		relays[k] = r
		filled++
	}
	return relays, nil
}

// socketPair returns a connected pair of Unix sockets, both closed on exec, the second
// non-blocking.
func socketPair() ([2]int, error) {
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return [2]int{}, err
	}
	if err := syscall.SetNonblock(fds[1], true); err != nil {
		_ = syscall.Close(fds[0])
		_ = syscall.Close(fds[1])
		return [2]int{}, err
	}
	return [2]int{fds[0], fds[1]}, nil
}
