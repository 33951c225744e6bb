package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/fallback"
)

// A rule under which a fallback may be configured, for the property.
type rule struct {
	name string
	when func(pipeline.Result[string]) bool // nil: the default
}

var rules = []rule{
	{"default (Failed)", nil},
	{"refusals", func(r pipeline.Result[string]) bool { return errors.Is(r.Err, pipeline.DependencyUnavailable) }},
	{"exhausted or permanent", func(r pipeline.Result[string]) bool {
		return errors.Is(r.Err, pipeline.AttemptsExhausted) || errors.Is(r.Err, pipeline.Permanent) || r.Verdict.Kind == outcome.Permanent
	}},
	{"transient values", func(r pipeline.Result[string]) bool { return r.Err == nil && r.Verdict.Kind == outcome.Transient }},
}

// result draws what the stages inside a fallback may return: any kind, with
// or without an error (a plain one, or a stop of any reason), a value or
// none, refusals and cancellations included.
func result(t *rapid.T) pipeline.Result[string] {
	v := outcome.Verdict{Kind: outcome.Kind(rapid.IntRange(0, 3).Draw(t, "kind"))}
	v.SelfImposed = v.Kind != outcome.OK && rapid.Bool().Draw(t, "selfImposed")
	v.Canceled = v.Kind == outcome.Permanent && rapid.Bool().Draw(t, "canceled")
	r := pipeline.Result[string]{Verdict: v, Value: rapid.SampledFrom([]string{"", "v1", "v2"}).Draw(t, "value")}
	switch rapid.IntRange(0, 2).Draw(t, "err") {
	case 1:
		r.Err = errors.New("plain")
	case 2:
		reason := pipeline.Reason(rapid.IntRange(int(pipeline.DependencyUnavailable), int(pipeline.HintBeyondDeadline)).Draw(t, "reason"))
		r.Err = &pipeline.StopError{Stage: "somewhere", Reason: reason}
	}
	if v.Kind == outcome.OK && r.Err != nil && rapid.Bool().Draw(t, "okWithError") {
		r.Err = nil // an OK verdict nearly always comes without an error; sometimes with one
	}
	return r
}

// handedOut is r as the pipeline hands it from a stage to the one outside: an
// error with the zero verdict judged, a stop as its stage would have refused
// with it, any other error as an attempt's error is classified (Transient, or
// the caller's when it canceled).
func handedOut(r pipeline.Result[string], canceled bool) pipeline.Result[string] {
	if r.Err == nil || r.Verdict != (outcome.Verdict{}) {
		return r
	}
	var stop *pipeline.StopError
	switch {
	case errors.As(r.Err, &stop) && (stop.Reason == pipeline.Canceled || stop.Reason == pipeline.Deadline):
		r.Verdict = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	case stop != nil:
		r.Verdict = outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}
	case canceled:
		r.Verdict = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	default:
		r.Verdict = outcome.Verdict{Kind: outcome.Transient}
	}
	return r
}

// The fallback's Func is called exactly for the results its rule chooses and
// whose caller has not canceled, never otherwise; what the call returns, and
// which values are released, follow from that alone:
//
//   - not called: the inner result, untouched, nothing released;
//   - called and succeeding: Func's value, no error, an OK verdict; the
//     original value released;
//   - called and failing: the original value and verdict, an error holding
//     both errors; Func's value released.
func TestFuncIsCalledOnlyForChosenResults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rl := rapid.SampledFrom(rules).Draw(t, "rule")
		inner := result(t)
		canceled := rapid.Bool().Draw(t, "callerCanceled")
		funcFails := rapid.Bool().Draw(t, "funcFails")
		funcValue := rapid.SampledFrom([]string{"", "fb"}).Draw(t, "funcValue")

		calls := 0
		var got pipeline.Result[string]
		p, err := fallback.New(fallback.Config[string]{
			When: rl.when,
			Func: func(_ context.Context, r pipeline.Result[string]) (string, error) {
				calls++
				got = r
				if funcFails {
					return funcValue, errors.New("func failed")
				}
				return funcValue, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		rel := &released{}
		var verdict outcome.Verdict
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if canceled {
			cancel()
		}
		// The pipeline hands a stage's error with the zero verdict outward
		// judged (see pipeline.Next.Run): that is what the fallback reads.
		inner = handedOut(inner, canceled)
		v, err := pipeline.New(spy[string](&verdict), pipeline.Policy[string](p), answer(inner)).
			With(pipeline.Options[string]{Release: rel.add, Describe: func(s string) string { return s }}).
			Execute(ctx, func(context.Context) (string, error) { panic("the work never runs") })

		when := rl.when
		if when == nil {
			when = fallback.Failed[string]
		}
		chosen := when(inner) && !canceled
		if want := map[bool]int{true: 1, false: 0}[chosen]; calls != want {
			t.Fatalf("rule %s, inner %+v, canceled %v: Func called %d times, want %d", rl.name, inner, canceled, calls, want)
		}
		relWant := []string(nil)
		switch {
		case !chosen:
			// A canceled caller's call that ends with an error that does not
			// say so comes back as the pipeline's Canceled stop wrapping it.
			wantErr := err == inner.Err
			if canceled && inner.Err != nil && inner.Verdict.Canceled && !errors.Is(inner.Err, context.Canceled) {
				wantErr = errors.Is(err, context.Canceled) && errors.Is(err, inner.Err)
			}
			if v != inner.Value || !wantErr || verdict != inner.Verdict {
				t.Fatalf("not chosen, yet (%q, %v, %v) came back for %+v", v, err, verdict, inner)
			}
		case !funcFails:
			if v != funcValue || err != nil || verdict != (outcome.Verdict{}) {
				t.Fatalf("replaced, yet (%q, %v, %v) came back", v, err, verdict)
			}
			if inner.Value != "" {
				relWant = []string{inner.Value}
			}
		default:
			fe, ok := errors.AsType[*fallback.Error](err)
			if v != inner.Value || !ok || verdict != inner.Verdict {
				t.Fatalf("failed fallback, yet (%q, %v, %v) came back for %+v", v, err, verdict, inner)
			}
			if inner.Err != nil && !errors.Is(err, inner.Err) {
				t.Fatalf("the original error %v is not reachable from %v", inner.Err, err)
			}
			if fe.Original != got.Err {
				t.Fatalf("the error's Original %v is not what Func got, %v", fe.Original, got.Err)
			}
			if funcValue != "" {
				relWant = []string{funcValue}
			}
		}
		if chosen && fallback.Failed(inner) && got.Err == nil {
			t.Fatalf("Func got a failure (%v) with a nil error", got.Verdict)
		}
		if r := rel.list(); fmt.Sprint(r) != fmt.Sprint(relWant) {
			t.Fatalf("released %q, want %q", r, relWant)
		}
	})
}
