package pipelinetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// watch waits until done is closed; a broken stage leaves it waiting for good.
func watch(done <-chan struct{}) { <-done }

// watchAtMost waits until done is closed or an hour has passed.
func watchAtMost(done <-chan struct{}) {
	select {
	case <-done:
	case <-time.After(time.Hour):
	}
}

// leakOnPanic is a broken stage: it starts a goroutine that watches each call
// and ends it after next.Run returns, rather than in a defer, so that a panic
// in the work leaves the goroutine behind.
func leakOnPanic(watcher func(<-chan struct{})) func() pipeline.Policy[int] {
	return func() pipeline.Policy[int] {
		return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			done := make(chan struct{})
			go watcher(done)
			r := next.Run(ctx)
			close(done)
			return r
		})
	}
}

// serial is a broken stage: it holds its lock while it runs next.Run, so calls
// reach the work one at a time and a caller waiting for the lock cannot give
// up when its context is done.
type serial struct {
	mu sync.Mutex
}

func (s *serial) Execute(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return next.Run(ctx)
}

// semaphore is a broken stage: it admits four calls at once, and a call that
// waits for a slot does not watch its context.
type semaphore struct {
	slots chan struct{}
}

func (s *semaphore) Execute(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
	s.slots <- struct{}{}
	defer func() { <-s.slots }()
	return next.Run(ctx)
}

// broken stages, each with a fault the suite must catch.
var broken = map[string]func() pipeline.Policy[int]{
	"leak":       leakOnPanic(watch),
	"leak-timer": leakOnPanic(watchAtMost),
	"lock":       func() pipeline.Policy[int] { return new(serial) },
	"semaphore":  func() pipeline.Policy[int] { return &semaphore{slots: make(chan struct{}, 4)} },
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

// Each broken stage fails the suite in a child process: with a normal test
// failure (exit status 1, no panic), in the checks expected, and with a
// message that says what is wrong.
func TestBrokenPoliciesFail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, tc := range []struct {
		name  string
		fails []string // the checks that fail
		alone bool     // whether no other check may fail
		want  []string // in the output
		not   []string // not in the output
	}{
		{"leak", []string{"PropagatesPanic"}, true, []string{
			"goroutine(s) still running after Execute returned",
			"pipelinetest_test.watch(",
			"goroutines this check left behind are blocked for good on something only the stage could end",
		}, nil},
		{"leak-timer", []string{"PropagatesPanic"}, true, []string{
			"goroutine(s) still running after Execute returned",
			"pipelinetest_test.watchAtMost(",
		}, []string{"blocked for good"}},
		{"lock", []string{"NoLockAcrossNext"}, true, []string{
			"the stage holds a lock across next.Run: a second call could not reach the work while the first was inside it",
			"sync.Mutex.Lock",
			"(*serial).Execute",
		}, nil},
		{"semaphore", []string{"ReturnsPromptlyWhenSaturated"}, true, []string{
			"of 64 calls at once, 4 reached the work and 60 waited in the stage; once canceled, 60 of those waiting did not return within 10ms",
			"pipeline.Interrupted(ctx, stage)",
		}, nil},
		{"swallow", []string{"PropagatesPanic"}, true, nil, nil},
		{"swap", []string{"PassesValue", "PassesValueOfSlowWork"}, false, nil, nil},
		{"detach", []string{"PropagatesContext", "ReturnsPromptlyWhenCanceled", "ReturnsPromptlyWhenSaturated"}, false, []string{
			"the work's context deadline is",
			"Execute did not return once the caller canceled",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenPolicy$", "-test.v", "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), "PIPELINETEST_BROKEN="+tc.name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "the suite passed a policy that should fail (%v):\n%s", err, out)
			assert.Equal(t, 1, exit.ExitCode(), "a test failure, not a crash:\n%s", out)
			assert.NotRegexp(t, `(?m)^panic: `, string(out))

			failed := failedChecks(string(out))
			if tc.alone {
				assert.Equal(t, tc.fails, failed, "the checks that failed:\n%s", out)
			} else {
				assert.Subset(t, failed, tc.fails, "the checks that failed:\n%s", out)
			}
			for _, s := range tc.want {
				assert.Contains(t, string(out), s, "%s", out)
			}
			for _, s := range tc.not {
				assert.NotContains(t, string(out), s, "%s", out)
			}
		})
	}
}

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: TestBrokenPolicy/(\w+)`)

// failedChecks returns the names of the checks that failed, in order.
func failedChecks(out string) []string {
	var names []string
	for _, m := range failLine.FindAllStringSubmatch(out, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}
