package models

import "context"

// A request is charged one unit of its caller's rate limit when it is admitted. Work
// that costs far more than a request's usual, such as a count whose filters each read
// messages row by row, is charged further units by the service, through the charge
// the door that admitted the request put in its context.

// chargeKey holds the charge of ctx's caller.
type chargeKey struct{}

// WithCharge returns ctx whose Charge takes units through charge: from the buckets of
// the rate limit that admitted the request. charge answers a RATE_LIMITED error when
// they hold too few.
func WithCharge(ctx context.Context, charge func(ctx context.Context, units int) error) context.Context {
	return context.WithValue(ctx, chargeKey{}, charge)
}

// Charge takes units more of the caller's rate limit for work ctx's request is about to
// do, or answers RATE_LIMITED (the work is then not done). Without a rate limit (none
// configured, or a command-line tool) it takes nothing.
func Charge(ctx context.Context, units int) error {
	charge, _ := ctx.Value(chargeKey{}).(func(context.Context, int) error)
	if charge == nil || units <= 0 {
		return nil
	}
	return charge(ctx, units)
}
