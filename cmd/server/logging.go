package main

import (
	"fmt"
	"io"
	"log/slog"
	"unicode/utf8"
)

// maxLogString bounds every string a log record carries (the message, each attribute,
// an error's text), so no request can make a log line as long as what it sent.
const maxLogString = 2 << 10

// newLogger logs JSON in production and text in development, on stderr, every string cut
// to maxLogString. The built-in handlers' ReplaceAttr sees the message and every
// attribute, those of groups and of With included, so it is the one place for the bound.
func newLogger(w io.Writer, c config) *slog.Logger {
	o := &slog.HandlerOptions{ReplaceAttr: boundAttr}
	if c.development() {
		return slog.New(slog.NewTextHandler(w, o))
	}
	return slog.New(slog.NewJSONHandler(w, o))
}

// boundAttr cuts a string value, or an error's text, longer than maxLogString.
func boundAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); len(s) > maxLogString {
			a.Value = slog.StringValue(cutLogString(s))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if s := err.Error(); len(s) > maxLogString {
				a.Value = slog.StringValue(cutLogString(s))
			}
		}
	}
	return a
}

// cutLogString is s's first maxLogString bytes at most, not splitting a UTF-8 sequence,
// and how many bytes were left out.
func cutLogString(s string) string {
	n := maxLogString
	for back := 0; back < utf8.UTFMax-1 && !utf8.RuneStart(s[n]); back++ {
		n--
	}
	return fmt.Sprintf("%s…[%d bytes cut]", s[:n], len(s)-n)
}
