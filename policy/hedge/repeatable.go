package hedge

import "context"

type repeatableKey struct{}

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
