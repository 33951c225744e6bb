package pipelinetest_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// passThrough is the simplest correct stage.
func passThrough() pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		return next.Run(ctx)
	})
}

func TestCorrectPolicyPasses(t *testing.T) {
	pipelinetest.Run(t, passThrough, 42)
}

// broken stages, each with the one fault the suite must catch.
var broken = map[string]func() pipeline.Policy[int]{
	"leak": func() pipeline.Policy[int] {
		return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			go func() { time.Sleep(time.Hour) }()
			return next.Run(ctx)
		})
	},
	"swallow": func() pipeline.Policy[int] {
		return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) (r pipeline.Result[int]) {
			defer func() { _ = recover() }()
			return next.Run(ctx)
		})
	},
	"detach": func() pipeline.Policy[int] {
		return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			return next.Run(context.Background())
		})
	},
	"swap": func() pipeline.Policy[int] {
		return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			r := next.Run(ctx)
			r.Value++
			return r
		})
	},
}

// TestBrokenPolicy is run in a child process by TestBrokenPoliciesFail.
func TestBrokenPolicy(t *testing.T) {
	name := os.Getenv("PIPELINETEST_BROKEN")
	if name == "" {
		t.Skip("run by TestBrokenPoliciesFail")
	}
	pipelinetest.Run(t, broken[name], 42)
}

func TestBrokenPoliciesFail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, want := range map[string]string{
		"leak":    "goroutine(s) still running after Execute returned",
		"swallow": "--- FAIL: TestBrokenPolicy/PropagatesPanic",
		"detach":  "--- FAIL: TestBrokenPolicy/PropagatesContext",
		"swap":    "--- FAIL: TestBrokenPolicy/PassesValue",
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenPolicy$", "-test.v")
			cmd.Env = append(os.Environ(), "PIPELINETEST_BROKEN="+name)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed a policy that should fail:\n%s", out)
			assert.Contains(t, string(out), want, "%s", out)
		})
	}
}
