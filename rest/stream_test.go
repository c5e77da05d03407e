package rest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"messages/cmd/server/edge"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/service"
	"messages/models/store"
	"messages/models/wire"
)

// encoded is a page as writeJSON writes it with each message in its wire form
// (wire.Message): what /v1 answered before pages were streamed. The envelope is
// MessagesPage itself with only its data's type changed, so a field added to it follows.
func encoded(t testing.TB, page *models.MessagesPage) []byte {
	t.Helper()
	v := reflect.ValueOf(page).Elem()
	fields := reflect.VisibleFields(v.Type())
	for i := range fields {
		if fields[i].Name == "Data" {
			fields[i].Type = reflect.TypeFor[[]json.RawMessage]()
		}
		fields[i].Index, fields[i].Offset = nil, 0
	}
	plain := reflect.New(reflect.StructOf(fields)).Elem()
	for i := range fields {
		if fields[i].Name != "Data" {
			plain.Field(i).Set(v.Field(i))
			continue
		}
		if page.Data == nil {
			continue
		}
		data := make([]json.RawMessage, len(page.Data))
		for j, m := range page.Data {
			data[j] = json.RawMessage("null")
			if m != nil {
				b, err := wire.Message(m)
				if err != nil {
					t.Fatal(err)
				}
				data[j] = b
			}
		}
		plain.Field(i).Set(reflect.ValueOf(data))
	}
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, plain.Interface())
	return rec.Body.Bytes()
}

// streamed is a page as writePage writes it.
func streamed(t testing.TB, page *models.MessagesPage) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := writePage(rec, page); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	return rec.Body.Bytes()
}

// everyField returns a value of T with every field set, down to the last nested one.
func everyField[T any]() *T {
	v := new(T)
	fill(reflect.ValueOf(v).Elem(), "s")
	return v
}

// The text of every string of the hostile records: HTML characters (kept unescaped), the
// characters JSON must escape, the line separators encoding/json always escapes, and
// text outside the BMP.
const hostileText = "<b>\"Ça & co\"</b>\\ \u2028\u2029 \x01\t日本 🎉 '</script>'"

func TestWritePageIsWriteJSON(t *testing.T) {
	t.Parallel()
	full := everyField[models.Message]()
	hostile := everyField[models.Message]()
	fill(reflect.ValueOf(hostile).Elem(), hostileText)
	hostile.Payload = models.JSON("{ \"html\" : \"<a href='x'>&amp;</a>\",\n\t\"sep\": \"\u2028\", \"n\": [ 1 , 2 ] }")
	hostile.Template.Data = models.JSON("{\n  \"nested\" : { \"x\" : \"<&>\" }\n}")

	bare := &models.Message{ID: "m-bare"}
	onlyTemplate := &models.Message{ID: "m-template", Template: full.Template, Content: []models.ContentBlock{}}
	onlySubscriber := &models.Message{ID: "m-subscriber", Subscriber: full.Subscriber}
	emptyTemplate := &models.Message{ID: "m-empty", Template: &models.Template{}, Subscriber: &models.Subscriber{}}
	shared := *full // another message with the same subscriber and template pointers
	shared.ID = "m-shared"
	copied := *full // and one with equal copies of them
	copied.ID = "m-copied"
	copiedSub, copiedTpl := *full.Subscriber, *full.Template
	copied.Subscriber, copied.Template = &copiedSub, &copiedTpl

	for name, page := range map[string]*models.MessagesPage{
		"everyField":     everyField[models.MessagesPage](),
		"hostile":        {TotalCount: 1, Data: []*models.Message{hostile}, PageSize: 10},
		"mixed":          {TotalCount: 7, HasMore: true, Data: []*models.Message{full, bare, onlyTemplate, onlySubscriber, emptyTemplate, &shared, &copied, hostile}, PageSize: 8, Page: 2},
		"nilData":        {PageSize: 10},
		"emptyData":      {Data: []*models.Message{}, PageSize: 10},
		"nilMessage":     {TotalCount: 2, Data: []*models.Message{nil, bare}, PageSize: 2},
		"zeroEverything": {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := encoded(t, page)
			// Twice: the second time the template bytes are wire.Template's memo.
			for range 2 {
				if got := streamed(t, page); !bytes.Equal(got, want) {
					t.Errorf("streamed page differs from writeJSON's:\n got %s\nwant %s", got, want)
				}
			}
		})
	}
}

// A seeded page (realistic templates, subscribers, content and payloads, many messages to
// a template) streams as writeJSON writes it, and so through the edge, gzipped or not.
func TestListMessagesStreamsTheEncodedPage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "stream")
		dbtest.Seed(t, s, seed.Options{Seed: 3, EnvironmentID: tn.Env.ID, Messages: 1000, Subscribers: 50, Templates: 7})
		now := func() time.Time { return dbtest.Base }
		res := NewBackend(s, slog.New(slog.DiscardHandler), now, nil)
		srv := httptest.NewServer(edge.Compress()(Chain(res, ChainOptions{})))
		t.Cleanup(srv.Close)

		for _, limit := range []string{"1000", "10"} {
			page, err := res.Service.List(tn.Context(), service.ListQuery{Limit: intPtr(limit), Parts: models.Everything})
			if err != nil {
				t.Fatal(err)
			}
			want := encoded(t, page)
			for _, gz := range []bool{false, true} {
				req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/messages?limit="+limit, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "ApiKey "+tn.Key)
				if gz {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				got, encoding := fetch(t, req)
				if wantEncoding := map[bool]string{true: "gzip"}[gz]; encoding != wantEncoding {
					t.Errorf("limit %s, gzip %v: Content-Encoding %q, want %q", limit, gz, encoding, wantEncoding)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("limit %s, gzip %v: body differs from writeJSON's (%d bytes, want %d)", limit, gz, len(got), len(want))
				}
			}
		}
	})
}

func intPtr(s string) *int {
	n, _ := strconv.Atoi(s)
	return &n
}

// fetch sends req (with the transport's own gzip handling off) and returns the body,
// decompressed, and its Content-Encoding.
func fetch(t testing.TB, req *http.Request) ([]byte, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("%s: %d %s", req.URL, res.StatusCode, b)
	}
	var body io.Reader = res.Body
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return b, res.Header.Get("Content-Encoding")
}

// A stored value that is not JSON cuts the page short after the status: the client gets
// a broken response, never a page it could take for whole.
func TestWritePageRecordError(t *testing.T) {
	t.Parallel()
	page := &models.MessagesPage{TotalCount: 2, Data: []*models.Message{{ID: "m1"}, {ID: "m2", Payload: models.JSON("{not json")}}}
	err := writePage(httptest.NewRecorder(), page)
	if _, ok := err.(*recordError); !ok {
		t.Fatalf("writePage = %v, want a *recordError", err)
	}
	broken := &models.Template{ID: "t1", Data: models.JSON("{not json")}
	err = writePage(httptest.NewRecorder(), &models.MessagesPage{Data: []*models.Message{{ID: "m3", Template: broken}}})
	if _, ok := err.(*recordError); !ok {
		t.Fatalf("writePage = %v, want a *recordError", err)
	}
}

// Concurrent pages share a template's memo (run with -race).
func TestTemplateWireConcurrent(t *testing.T) {
	t.Parallel()
	tpl := everyField[models.Template]()
	fresh := *tpl // another template: encoded afresh
	want, err := wire.Template(&fresh)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, err := wire.Template(tpl)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("wire.Template = %s, %v; want %s", got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkWritePage encodes a seeded page of 1,000 messages (20 templates, 100
// subscribers) as GET /v1/messages?limit=1000 writes it.
func BenchmarkWritePage(b *testing.B) {
	s := dbtest.Open(b, "sqlite")
	stats := dbtest.Seed(b, s, seed.Options{Seed: 1, Messages: 1000, Subscribers: 100, Templates: 20})
	page, err := s.ListMessages(context.Background(), stats.EnvironmentID, models.ListFilter{}, models.Page{Size: 1000}, models.Everything)
	if err != nil {
		b.Fatal(err)
	}
	w := &discardResponse{header: http.Header{}}
	if err := writePage(w, page); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(w.n)
	b.Run("shared-templates", func(b *testing.B) {
		// The store's template cache hands every page the same templates, whose
		// encodings wire.Template keeps.
		b.ReportAllocs()
		for b.Loop() {
			_ = writePage(w, page)
		}
	})
	b.Run("fresh-templates", func(b *testing.B) {
		// Templates read for this page alone (no cache): each is encoded once a page.
		b.ReportAllocs()
		for b.Loop() {
			fresh := make(map[*models.Template]*models.Template)
			for _, m := range page.Data {
				if m.Template != nil && fresh[m.Template] == nil {
					c := *m.Template
					fresh[m.Template] = &c
				}
			}
			for _, m := range page.Data {
				if m.Template != nil {
					m.Template = fresh[m.Template]
				}
			}
			_ = writePage(w, page)
		}
	})
}

// discardResponse is a ResponseWriter that counts what it is sent and keeps none of it.
type discardResponse struct {
	header http.Header
	n      int64
}

func (d *discardResponse) Header() http.Header { return d.header }
func (d *discardResponse) WriteHeader(int)     {}
func (d *discardResponse) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return len(p), nil
}
