package fallback_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fallback"
)

// A price service that is down is answered from the last known price, and the
// error that was replaced reaches the event hook.
func Example() {
	lastKnown := map[string]string{"book": "12.50"}
	fb, err := fallback.New(fallback.Config[string]{
		Name: "prices",
		Func: func(ctx context.Context, r pipeline.Result[string]) (string, error) {
			if p, ok := lastKnown["book"]; ok {
				return p + " (cached)", nil
			}
			return "", errors.New("no cached price")
		},
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New[string](fb).With(pipeline.Options[string]{
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if x, ok := e.(fallback.Executed); ok {
				fmt.Println("replaced:", x.Err)
			}
		},
	})
	price, err := p.Execute(context.Background(), func(context.Context) (string, error) {
		return "", errors.New("connection refused")
	})
	fmt.Println(price, err)
	// Output:
	// replaced: connection refused
	// 12.50 (cached) <nil>
}

// A fallback that answers only when the breaker refuses: other failures reach
// the caller as they are.
func ExampleConfig_when() {
	br, err := breaker.New(breaker.Config{})
	if err != nil {
		panic(err)
	}
	fb, err := fallback.New(fallback.Config[string]{
		When: func(r pipeline.Result[string]) bool { return errors.Is(r.Err, pipeline.DependencyUnavailable) },
		Func: func(context.Context, pipeline.Result[string]) (string, error) { return "degraded", nil },
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(pipeline.Policy[string](fb), breaker.Guard[string](br))
	work := func(context.Context) (string, error) { return "", errors.New("bad request") }

	_, err = p.Execute(context.Background(), work)
	fmt.Println(err)
	br.Isolate()
	v, err := p.Execute(context.Background(), work)
	fmt.Println(v, err)
	// Output:
	// bad request
	// degraded <nil>
}

// Impossible settings are refused, naming the field.
func ExampleNew_invalid() {
	_, err := fallback.New(fallback.Config[string]{})
	fmt.Println(err)
	// Output: fallback: Config.Func must be set: it computes the replacement, and has no default
}
