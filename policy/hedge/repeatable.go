package hedge

import "context"

type repeatableKey struct{}

// copyKey is the key a copy's context answers with its number.
type copyKey struct{}

// CopyOf reports which copy of a hedged attempt ctx belongs to: 0 for the
// attempt itself, 1, 2, ... for its hedges, in the order they were sent. ok
// is false for a context the hedge stage did not make (an attempt that was
// not hedged, or no hedge stage at all). Contexts derived from a copy's answer
// as it does, so work and event hooks can tell the copies apart.
func CopyOf(ctx context.Context) (n int, ok bool) {
	n, ok = ctx.Value(copyKey{}).(int)
	return n, ok
}

// Repeatable returns a copy of ctx that marks the call it is given to as safe
// to send more than once (an idempotent read, a request with an idempotency
// key), so a hedge stage may hedge it. Config.Repeatable marks every call of a
// stage instead.
func Repeatable(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatableKey{}, true)
}

// IsRepeatable reports whether ctx was marked by [Repeatable].
func IsRepeatable(ctx context.Context) bool {
	v, _ := ctx.Value(repeatableKey{}).(bool)
	return v
}
