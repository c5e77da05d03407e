package service_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/service"
	"messages/models/store"
)

// Workflows are the caller's environment's active, undeleted templates by name, for a
// session as for a key, and never another environment's.
func TestWorkflows(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := dbtest.NewTenant(t, s, "wf-a"), dbtest.NewTenant(t, s, "wf-b")
		a.Template(t, "zeta")
		alpha := a.Template(t, "alpha")
		inactive, deleted := a.Template(t, "inactive"), a.Template(t, "deleted")
		if err := s.DB().Exec("UPDATE templates SET active = ? WHERE id = ?", false, inactive.ID).Error; err != nil {
			t.Fatal(err)
		}
		if err := s.DB().Exec("UPDATE templates SET deleted = ? WHERE id = ?", true, deleted.ID).Error; err != nil {
			t.Fatal(err)
		}
		b.Template(t, "beta")
		svc := service.New(service.Options{Store: s})
		session := a.Caller
		session.SubscriberID = "ada"
		for name, caller := range map[string]models.Caller{"key": a.Caller, "session": session} {
			got, err := svc.Workflows(models.WithCaller(t.Context(), caller))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, w := range got {
				names = append(names, w.Name)
			}
			if diff := cmp.Diff([]string{"alpha", "zeta"}, names); diff != "" {
				t.Errorf("%s: workflows (-want +got):\n%s", name, diff)
			}
			if got[0].ID != alpha.ID || len(got[0].Tags) != 1 {
				t.Errorf("%s: alpha read back as %+v", name, got[0])
			}
		}
		if _, err := svc.Workflows(t.Context()); models.ErrorCode(err) != models.EUNAUTHORIZED {
			t.Errorf("without a caller: %v, want unauthorized", err)
		}
	})
}
