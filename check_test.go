package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// stages builds one stage of each kind, by letter: T and t are timeouts of
// 10 s and 1 s, R a retry, B a breaker, H a hedge, F a fallback, C a measured
// ceiling, I fault injection, K a bulkhead, and x a custom stage that does not describe
// itself.
func stages(t *testing.T, letters string) []pipeline.Policy[int] {
	t.Helper()
	var out []pipeline.Policy[int]
	for _, l := range letters {
		switch l {
		case 'T', 't':
			d := 10 * time.Second
			if l == 't' {
				d = time.Second
			}
			p, err := timeout.New[int](timeout.Config{Timeout: d})
			require.NoError(t, err)
			out = append(out, p)
		case 'R':
			p, err := retry.New[int](retry.Config{})
			require.NoError(t, err)
			out = append(out, p)
		case 'B':
			b, err := breaker.New(breaker.Config{})
			require.NoError(t, err)
			out = append(out, breaker.Guard[int](b))
		case 'H':
			p, err := hedge.New[int](hedge.Config{})
			require.NoError(t, err)
			out = append(out, p)
		case 'F':
			p, err := fallback.New(fallback.Config[int]{Func: func(context.Context, pipeline.Result[int]) (int, error) { return 0, nil }})
			require.NoError(t, err)
			out = append(out, p)
		case 'C':
			p, err := ceiling.New[int](ceiling.Config{})
			require.NoError(t, err)
			out = append(out, p)
		case 'I':
			p, err := fault.New(fault.Config[int]{})
			require.NoError(t, err)
			out = append(out, p)
		case 'K':
			b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 4})
			require.NoError(t, err)
			out = append(out, bulkhead.Guard[int](b))
		case 'x':
			out = append(out, pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
				return next.Run(ctx)
			}))
		default:
			t.Fatalf("no stage %q", l)
		}
	}
	return out
}

// problem is a Problem without its text, for the table.
type problem struct {
	severity     pipeline.Severity
	outer, inner int
}

func TestCheckReportsEachComposition(t *testing.T) {
	for _, tc := range []struct {
		letters string
		want    []problem
	}{
		{"TRBHt", nil}, // the recommended card
		{"TRBH", nil},  // without the attempt timeout
		{"tRBHT", []problem{{pipeline.Error, 1, 5}}}, // the attempt timeout outlasts the call's
		{"TRBHT", []problem{{pipeline.Error, 1, 5}}}, // equal timeouts: the inner never fires first
		{"tT", []problem{{pipeline.Error, 1, 2}}},    // no retry between them: still never first
		{"Tt", nil}, // shorter inside: fine
		{"TBRHt", []problem{{pipeline.Warning, 2, 3}}},  // breaker outside the retry
		{"TRHBt", []problem{{pipeline.Warning, 3, 4}}},  // hedge outside the breaker
		{"TRRBt", []problem{{pipeline.Warning, 2, 3}}},  // two retries
		{"TRxRBt", []problem{{pipeline.Warning, 2, 4}}}, // two retries, a custom stage between
		{"BHRB", []problem{{pipeline.Warning, 1, 3}, {pipeline.Warning, 2, 4}}},
		{"FTRBHCIt", nil}, // the card with every stage where it belongs
		{"TRFBt", []problem{{pipeline.Warning, 2, 3}}}, // a fallback inside the retry
		{"TBFt", []problem{{pipeline.Warning, 2, 3}}},  // a fallback inside the breaker
		{"TCRBt", []problem{{pipeline.Warning, 2, 3}}}, // a ceiling outside the retry
		{"IRBt", []problem{{pipeline.Warning, 1, 2}}},  // faults injected outside the retry
		{"xxx", nil}, // stages that do not describe themselves are not judged
		{"", nil},
	} {
		t.Run(tc.letters, func(t *testing.T) {
			var got []problem
			for _, p := range pipeline.Check(stages(t, tc.letters)...) {
				got = append(got, problem{p.Severity, p.Outer, p.Inner})
				assert.NotEmpty(t, p.Text)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNewRefusesAnErrorAndAcceptsAWarning(t *testing.T) {
	assert.PanicsWithValue(t,
		"pipeline: New: error: stages 1 and 2: the inner timeout (10s) is not shorter than the outer one (1s), so it can never fire first: make it shorter or remove it",
		func() { pipeline.New(stages(t, "tT")...) })
	p := pipeline.New(stages(t, "BR")...) // a warning only
	v, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	assert.Equal(t, 1, v)
	assert.NoError(t, err)
}

func TestProblemSaysSeverityAndPositions(t *testing.T) {
	p := pipeline.Problem{Severity: pipeline.Warning, Outer: 2, Inner: 3, Text: "why"}
	assert.Equal(t, "warning: stages 2 and 3: why", p.Error())
	assert.Equal(t, "error", pipeline.Error.String())
	assert.Equal(t, "pipeline.Severity(9)", pipeline.Severity(9).String())
}
