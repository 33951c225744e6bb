package pipelinegrpc

import (
	"context"

	"github.com/resilience-go/pipeline/policy/hedge"
)

// modeKey is the context key of a call's own replay choice.
type modeKey struct{}

// mode is a call's own replay choice; the zero value means none.
type mode uint8

const (
	auto mode = iota
	idempotentMode
	onceMode
)

// Idempotent returns a copy of ctx that marks the RPC it is given to as safe
// to send more than once, whatever Config.Methods says of its method: a
// write the server deduplicates by a request ID, say. The client then
// retries and hedges it as it would a method declared idempotent. It undoes
// [SendOnce] on the same context. A context marked with hedge.Repeatable is
// taken as marked with Idempotent.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, modeKey{}, idempotentMode)
}

// SendOnce returns a copy of ctx that marks the RPC it is given to as not
// safe to send more than once, whatever Config.Methods says of its method:
// it is neither retried nor hedged. It undoes [Idempotent] on the same
// context.
func SendOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, modeKey{}, onceMode)
}

// replayable reports whether an RPC with ctx to a method declared m may be
// sent more than once: the context's own mark if it has one, else m.
func replayable(ctx context.Context, m Method) bool {
	switch md, _ := ctx.Value(modeKey{}).(mode); md {
	case idempotentMode:
		return true
	case onceMode:
		return false
	}
	return m.Idempotent || hedge.IsRepeatable(ctx)
}
