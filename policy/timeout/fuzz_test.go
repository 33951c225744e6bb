package timeout_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/timeout"

	"github.com/resilience-go/pipeline/internal/testcheck"
)

// FuzzConfig checks timeout.Config.Validate and the stage a valid Config
// builds:
//
//   - Validate never panics, and returns nil exactly when New succeeds;
//   - its error names Config.Timeout (which has no default, so is always to
//     blame) or Config.Grace when the caller set it;
//   - inside testing/synctest, a call whose work takes work (honouring its
//     context unless ignore) ends as the stage promises: work shorter than the
//     timeout returns its value; work that honours its context and outlasts
//     the timeout stops with a Deadline *pipeline.StopError at the timeout;
//     work that ignores it returns its value late when unguarded, and is
//     abandoned at the timeout plus the grace when guarded.
func FuzzConfig(f *testing.F) {
	for _, d := range []int64{0, 1, -1, int64(time.Millisecond), int64(time.Second), math.MaxInt32, math.MaxInt64, math.MinInt64} {
		f.Add(d, false, int64(0), int64(time.Millisecond), false)
		f.Add(d, true, int64(0), int64(time.Hour), true)
		f.Add(int64(time.Second), true, d, int64(2*time.Second), true)
		f.Add(int64(time.Second), false, d, d, false)
		f.Add(int64(time.Second), true, int64(time.Millisecond), d, true)
	}

	f.Fuzz(func(t *testing.T, limit int64, guard bool, grace int64, work int64, ignore bool) {
		cfg := timeout.Config{Timeout: time.Duration(limit), Abandon: guard, Grace: time.Duration(grace)}
		err := testcheck.Validate(t, cfg, cfg.Validate)
		stage, errNew := timeout.New[int](cfg)
		if (err == nil) != (errNew == nil) {
			t.Fatalf("Validate() = %v but New returned %v for %+v", err, errNew, cfg)
		}
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "Config.Timeout") && !(grace != 0 && strings.Contains(msg, "Config.Grace")) {
				t.Fatalf("error %q for %+v names neither Config.Timeout nor a Config.Grace that is set", msg, cfg)
			}
			return
		}
		patience := time.Duration(0) // how long after the timeout the stage waits for the work
		if guard {
			patience = cmp.Or(cfg.Grace, timeout.DefaultGrace)
		}
		took := time.Duration(max(work, 0))
		synctest.Test(t, func(t *testing.T) {
			done := make(chan struct{}) // closed when the work returns, abandoned or not
			defer func() { <-done }()   // the bubble must not end before it does
			start := time.Now()
			v, err := pipeline.New[int](stage).Execute(context.Background(), func(ctx context.Context) (int, error) {
				defer close(done)
				if ignore {
					time.Sleep(took)
					return 1, nil
				}
				select {
				case <-time.After(took):
					return 1, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			})
			elapsed := time.Since(start)
			switch {
			case took < cfg.Timeout, ignore && !guard:
				if v != 1 || err != nil || elapsed != took {
					t.Fatalf("work of %v under %+v: %d, %v after %v", took, cfg, v, err, elapsed)
				}
			case !ignore && took > cfg.Timeout:
				checkDeadline(t, err, elapsed, cfg.Timeout)
			case ignore && float64(took) > float64(cfg.Timeout)+float64(patience):
				checkDeadline(t, err, elapsed, cfg.Timeout+patience)
			}
		})
	})
}

// checkDeadline checks that err is a Deadline stop of the timeout stage that
// came after elapsed == want.
func checkDeadline(t *testing.T, err error, elapsed, want time.Duration) {
	t.Helper()
	stop, ok := errors.AsType[*pipeline.StopError](err)
	if !ok || stop.Reason != pipeline.Deadline || stop.Stage != "timeout" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the timeout stage's Deadline stop", err)
	}
	if elapsed != want {
		t.Fatalf("the deadline stop came after %v, want %v", elapsed, want)
	}
}
