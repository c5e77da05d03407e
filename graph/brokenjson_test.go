package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"messages/graph"
	"messages/models/dbtest"
	"messages/models/store"
)

// A page holding a message whose payload, overrides and cta another writer left as text
// that is not JSON: the list encoders and gqlgen's executor both answer valid JSON, the
// same bytes, with those fields null and the other message as stored.
func TestBrokenJSONAnsweredAsNull(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "broken")
		sub, tpl := tn.Subscriber(t, "sub-broken"), tn.Template(t, "tpl")
		broken, intact := tn.Message(t, sub, tpl, nil), tn.Message(t, sub, tpl, nil)
		if err := s.DB().Exec("UPDATE messages SET payload = 'xxx', overrides = '{', cta = 'nope' WHERE id = ?", broken.ID).Error; err != nil {
			t.Fatal(err)
		}
		query := "{ messages { data {" + messageFields + "} } }" + stepFields
		var answers []string
		for _, o := range []graph.HandlerOptions{defaults, graph.ExecutorOnly(defaults)} {
			r := post(t, serve(t, newHandler(s, discard, o), tn), query, nil) // read fails on a body that is not JSON
			var got struct {
				Messages struct {
					Data []struct {
						ID                 string `json:"_id"`
						Payload, Overrides json.RawMessage
						CTA                map[string]any
					}
				}
			}
			decode(t, r, &got)
			if len(got.Messages.Data) != 2 {
				t.Fatalf("%d messages: %s", len(got.Messages.Data), r.Body)
			}
			for _, m := range got.Messages.Data {
				switch m.ID {
				case broken.ID:
					if string(m.Payload) != "null" || string(m.Overrides) != "null" || m.CTA["type"] != nil || m.CTA["action"] != nil {
						t.Errorf("the broken message: payload %s, overrides %s, cta %v; want null", m.Payload, m.Overrides, m.CTA)
					}
				case intact.ID:
					if string(m.Payload) != string(intact.Payload) || m.CTA["type"] != "redirect" {
						t.Errorf("the intact message: payload %s, cta %v", m.Payload, m.CTA)
					}
				}
			}
			answers = append(answers, r.Body)
		}
		if answers[0] != answers[1] {
			t.Errorf("the encoders and the executor answer differently:\n%s\n%s", answers[0], answers[1])
		}
		if strings.Contains(answers[0], "xxx") || strings.Contains(answers[0], "nope") {
			t.Errorf("the answer holds the broken text: %s", answers[0])
		}
	})
}
