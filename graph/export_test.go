package graph

import "sync/atomic"

// ExecutorOnly returns o set to leave every query to gqlgen's executor.
func ExecutorOnly(o HandlerOptions) HandlerOptions {
	o.executorOnly = true
	return o
}

// CountingListQueries returns o set to count in n the queries the list encoders answer.
func CountingListQueries(o HandlerOptions, n *atomic.Int64) HandlerOptions {
	o.listAnswered = n
	return o
}
