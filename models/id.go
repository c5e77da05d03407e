package models

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// idCounter makes ids minted within one second by this process distinct and ordered.
var idCounter atomic.Uint32

// idProcess is five random bytes chosen once per process, as in a MongoDB ObjectId.
var idProcess = func() [5]byte {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return b
}()

func init() {
	var b [4]byte
	_, _ = rand.Read(b[:])
	idCounter.Store(binary.BigEndian.Uint32(b[:]))
}

// NewID returns a 24-hex-digit, time-ordered identifier shaped like a MongoDB ObjectId:
// four bytes of Unix seconds, five bytes fixed per process and a three-byte counter.
func NewID(now time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(now.Unix()))
	copy(b[4:9], idProcess[:])
	c := idCounter.Add(1)
	b[9], b[10], b[11] = byte(c>>16), byte(c>>8), byte(c)
	return hex.EncodeToString(b[:])
}

// IsID reports whether s has the shape of an identifier: exactly 24 lowercase hex digits.
func IsID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
