package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
)

// TestHooksFansOut checks that every hook sees every event, in the order the
// hooks were given, with the event's context and source.
func TestHooksFansOut(t *testing.T) {
	type key struct{}
	var seen []string
	hook := func(name string) func(context.Context, pipeline.Source, pipeline.Event) {
		return func(ctx context.Context, src pipeline.Source, e pipeline.Event) {
			seen = append(seen, name+":"+src.Pipeline+":"+e.Name()+":"+ctx.Value(key{}).(string))
		}
	}
	all := pipeline.Hooks(hook("a"), nil, hook("b"))
	ctx := context.WithValue(context.Background(), key{}, "ctx")
	all(ctx, pipeline.Source{Pipeline: "p"}, pipeline.LateReturn{})
	assert.Equal(t, []string{"a:p:late_return:ctx", "b:p:late_return:ctx"}, seen)
}

// TestHooksOfNoneIsNil checks that combining nothing leaves a pipeline
// unobserved, and that one hook is returned as it is.
func TestHooksOfNoneIsNil(t *testing.T) {
	assert.Nil(t, pipeline.Hooks())
	assert.Nil(t, pipeline.Hooks(nil, nil))
	calls := 0
	one := func(context.Context, pipeline.Source, pipeline.Event) { calls++ }
	pipeline.Hooks(nil, one)(context.Background(), pipeline.Source{}, pipeline.LateReturn{})
	assert.Equal(t, 1, calls)
	observed := true
	probe := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		observed = next.Observed()
		return next.Run(ctx)
	})
	p := pipeline.New[int](probe).With(pipeline.Options[int]{OnEvent: pipeline.Hooks(nil)})
	_, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	assert.NoError(t, err)
	assert.False(t, observed, "a pipeline given Hooks() of nothing builds no events")
}
