package main

import (
	"io"
	"log/slog"
)

// newLogger logs JSON in production and text in development, on stderr.
func newLogger(w io.Writer, c config) *slog.Logger {
	if c.development() {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}
