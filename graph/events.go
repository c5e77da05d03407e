package graph

import (
	"errors"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/models/changefeed"
)

// streamEnded is the error of the last event of a stream the server closed: the client
// fell behind, or the catch-up could not read the database.
func streamEnded(err error) error {
	if errors.Is(err, changefeed.ErrSlowConsumer) {
		return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": "SLOW_CONSUMER"}}
	}
	if errors.Is(err, changefeed.ErrShuttingDown) {
		return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": "SHUTTING_DOWN"}}
	}
	return err
}
