package edge

import (
	"net/http"

	"messages/models"
)

// Budget gives every request that is not a stream a byte budget of limit drawn from pool
// (models.Budget): the store charges it the rows the request reads, the GraphQL executor
// the response it writes, and past it the request is refused instead of holding more.
// A stream's transport gives each of its queries and mutations one of its own
// (Gate.Operation).
func Budget(pool *models.BudgetPool, limit int64) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if Streaming(r) {
				next.ServeHTTP(w, r)
				return
			}
			b := pool.NewBudget(limit)
			defer b.Release()
			next.ServeHTTP(w, r.WithContext(models.WithBudget(r.Context(), b)))
		})
	}
}
