package fallback

import (
	"context"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// Policy is a fallback stage. Build one with [New]; it is immutable and safe
// for concurrent use.
type Policy[T any] struct {
	name string
	when func(pipeline.Result[T]) bool
	fn   func(context.Context, pipeline.Result[T]) (T, error)
}

// New returns a fallback stage configured by cfg, or an error naming the
// first setting that cannot work.
func New[T any](cfg Config[T]) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Policy[T]{name: cfg.Name, when: cfg.When, fn: cfg.Func}
	if p.when == nil {
		p.when = Failed[T]
	}
	return p, nil
}

// Stage says that p is a fallback stage, with its name.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Fallback, Name: p.name}
}

// Execute runs the stages inside and returns their result, unless When
// chooses it and the caller has not canceled: then it calls Func and returns
// the replacement, or, if Func fails, the original result with an [*Error].
// It emits [Executed] after each call of Func. See the package documentation
// for which values are released.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	r := next.Run(ctx)
	if !p.chooses(next, r) || outcome.CallerCanceled(ctx) {
		return r
	}
	return p.replace(ctx, next, r)
}

// chooses reports whether When chooses r. If When panics, nobody will get
// r's value: it is released before the panic goes on, as it is when Func
// panics.
func (p *Policy[T]) chooses(next pipeline.Next[T], r pipeline.Result[T]) bool {
	returned := false
	defer func() {
		if !returned {
			next.Discard(r)
		}
	}()
	chosen := p.when(r)
	returned = true
	return chosen
}

// replace calls Func for r and returns what the call ends with.
func (p *Policy[T]) replace(ctx context.Context, next pipeline.Next[T], r pipeline.Result[T]) pipeline.Result[T] {
	orig := r
	orig.Err = next.ErrOf(r)
	returned := false
	defer func() {
		if !returned { // Func panicked: nobody will get r's value
			next.Discard(r)
		}
	}()
	v, err := p.fn(ctx, orig)
	returned = true
	out := pipeline.Result[T]{Value: v}
	if err != nil { // nothing replaced: the original result stands
		next.Discard(out)
		out = orig
		out.Err = &Error{Err: err, Original: orig.Err}
	} else {
		next.Discard(r)
	}
	if next.Observed() { // after the releases, so that a panicking hook leaves nothing held
		next.Emit(ctx, Executed{Verdict: r.Verdict, Err: orig.Err, FuncErr: err})
	}
	return out
}
