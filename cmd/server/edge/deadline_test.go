package edge_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"messages/cmd/server/edge"
)

func TestTimeoutDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		want    bool
	}{
		{"deadlineSet", 200 * time.Millisecond, true},
		{"deadlineOffWhenZero", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deadline time.Time
			var ok bool
			h := edge.Deadline(tt.timeout)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				deadline, ok = r.Context().Deadline()
			}))
			start := time.Now()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/messages", nil))
			if ok != tt.want {
				t.Fatalf("deadline set = %v, want %v", ok, tt.want)
			}
			if ok && (deadline.Before(start.Add(tt.timeout)) || deadline.After(time.Now().Add(tt.timeout))) {
				t.Errorf("deadline %s from the start, want %s", deadline.Sub(start), tt.timeout)
			}
		})
	}
}
