package bench

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/cmd/loadtest/serverdb"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/store"
	"messages/models/wire"
)

// floorDepth is the depth of the cursor floor the test compares.
const floorDepth = 20

// floorFixture seeds a fresh MySQL database, marks one of the busiest subscriber's
// messages, and returns its store, the environment, that subscriber, five transaction ids
// and a floor over the same rows.
func floorFixture(t *testing.T) (st *store.Store, env, inbox string, txns []string, f *rawFloor) {
	t.Helper()
	ctx := t.Context()
	url := dbtest.URL(t, store.DialectMySQL)
	st, err := store.Open(ctx, url, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	stats, err := seed.Generate(ctx, st, seed.Options{Seed: 3, Messages: 400, Subscribers: 12, Templates: 4})
	if err != nil {
		t.Fatal(err)
	}
	env = stats.EnvironmentID
	db, err := serverdb.Open(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })

	if inbox, err = busiestSubscriber(ctx, db, env); err != nil {
		t.Fatal(err)
	}
	first, err := st.ListMessages(ctx, env, models.ListFilter{SubscriberID: &inbox}, models.Page{Size: 10}, models.Everything)
	if err != nil {
		t.Fatal(err)
	}
	// A marked message: its state lives beside the cta document and is folded into it.
	if _, err := st.MarkMessageAction(ctx, env, models.MarkAction{SubscriberID: inbox, MessageID: first.Data[1].ID,
		Type: models.ButtonPrimary, Status: models.ActionDone, Payload: models.JSON(`{"choice":"<yes>"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, m := range first.Data[:5] {
		txns = append(txns, m.TransactionID)
	}
	positions, err := keysetPositions(ctx, db, env, map[string]int{"graphql-cursor-deep": floorDepth})
	if err != nil {
		t.Fatal(err)
	}
	f = &rawFloor{db: db, environmentID: env, pageSize: 10, deepOffset: 50, inbox: inbox, transactionIDs: txns, positions: positions}
	return st, env, inbox, txns, f
}

// TestFloorPagesMatchTheStore checks that every floor reads the page the server returns:
// the same rows, order, embedded records, count and bytes, so a ratio to the floor
// compares equal work.
func TestFloorPagesMatchTheStore(t *testing.T) {
	st, env, inbox, txns, f := floorFixture(t)
	noCount := models.ListOptions{Subscribers: true, Templates: true}
	tests := []struct {
		floor  string
		filter models.ListFilter
		page   models.Page
		opts   models.ListOptions
	}{
		{floorFirstPage, models.ListFilter{}, models.Page{Size: 10}, models.Everything},
		{floorFirstPageNoCount, models.ListFilter{}, models.Page{Size: 10}, noCount},
		{floorInboxPage, models.ListFilter{SubscriberID: &inbox}, models.Page{Size: 10}, models.Everything},
		{floorDeepPage, models.ListFilter{}, models.Page{Number: 5, Size: 10}, models.Everything},
		{floorTransactions, models.ListFilter{TransactionIDs: txns}, models.Page{Size: 10}, models.Everything},
		{floorCursorDeep, models.ListFilter{}, models.Page{Number: floorDepth / 10, Size: 10}, noCount},
		{naiveFirstPage, models.ListFilter{}, models.Page{Size: 10}, models.Everything},
		{naiveDeepPage, models.ListFilter{}, models.Page{Number: 5, Size: 10}, models.Everything},
	}
	for _, tt := range tests {
		t.Run(tt.floor, func(t *testing.T) {
			ctx := t.Context()
			want, err := st.ListMessages(ctx, env, tt.filter, tt.page, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if floorByName(tt.floor).keyset != "" {
				want.Page = 0 // a cursor page has no page number
			}
			got, err := f.page(ctx, floorByName(tt.floor))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Data) == 0 {
				t.Fatal("empty page")
			}
			if diff := cmp.Diff(encode(t, v1Page(t, want)), encode(t, got)); diff != "" {
				t.Errorf("floor page differs from the store's (-store +floor):\n%s", diff)
			}
		})
	}
}

// v1Page is page with its messages in their /v1 form (models/wire), as the server
// writes it.
func v1Page(t *testing.T, page *models.MessagesPage) any {
	t.Helper()
	data := make([]json.RawMessage, len(page.Data))
	for i, m := range page.Data {
		b, err := wire.Message(m)
		if err != nil {
			t.Fatal(err)
		}
		data[i] = b
	}
	return struct {
		TotalCount int               `json:"totalCount"`
		HasMore    bool              `json:"hasMore"`
		Data       []json.RawMessage `json:"data"`
		PageSize   int               `json:"pageSize"`
		Page       int               `json:"page"`
	}{page.TotalCount, page.HasMore, data, page.PageSize, page.Page}
}

// encode writes v as /v1 does, indented so a difference reads line by line.
func encode(t *testing.T, v any) string {
	t.Helper()
	var buf, out bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
