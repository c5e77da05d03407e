package store_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// An export walks MessagesOldestFirst, which reads one environment's records only.
func TestExportIsolatesTenants(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		var got []string
		for _, line := range bytes.Split(bytes.TrimSpace(dbtest.Export(t, s, f.a.Env.ID)), []byte("\n")) {
			var m models.Message
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			got = append(got, f.names[m.ID]+" "+m.EnvironmentID+" "+m.Subscriber.EnvironmentID)
		}
		var want []string
		for _, name := range []string{"a1", "a2", "a3", "a4", "a5", "a6"} {
			want = append(want, name+" "+f.a.Env.ID+" "+f.a.Env.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tenant A's export (-want +got):\n%s", diff)
		}
	})
}
