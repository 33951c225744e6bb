package simulation_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/internal/testcheck"
	"github.com/resilience-go/pipeline/simulation"
)

// FuzzConfig: Validate never panics, blames only fields the caller set (and
// the two that have no default), and a configuration it accepts runs: Run
// succeeds exactly when Validate does. Runs are kept short (a few simulated
// seconds at a modest rate) so that the fuzzer spends its time on settings.
func FuzzConfig(f *testing.F) {
	extremes := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, int64(time.Second)}
	for _, d := range extremes {
		f.Add(d, 1, 50.0, int64(0), int64(0), 0, int64(0), true)
		f.Add(int64(time.Second), int(d%1000), 50.0, d, d, int(d%10), d, d > 0)
	}
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64} {
		f.Add(int64(time.Second), 1, rate, int64(0), int64(0), 0, int64(0), false)
	}
	f.Fuzz(func(t *testing.T, duration int64, processes int, rate float64, attemptTimeout, deadline int64, maxAttempts int, pause int64, withRetry bool) {
		cfg := simulation.Config{
			Seed:       1,
			Duration:   time.Duration(duration),
			Dependency: simulation.Healthy{},
			Processes:  processes,
			Rate:       rate,
			Client:     simulation.Client{AttemptTimeout: time.Duration(attemptTimeout), Deadline: time.Duration(deadline)},
		}
		if withRetry {
			cfg.Client.Retry = &simulation.Retry{MaxAttempts: maxAttempts, RefusalPause: time.Duration(pause)}
		}
		err := testcheck.Validate(t, cfg, cfg.Validate)
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{
				"Config.Duration": true, "Config.Rate": true, // no defaults: always to blame
				"Config.Processes": processes != 0, "Client.AttemptTimeout": attemptTimeout != 0,
				"Client.Deadline": deadline != 0, "Config.MaxAttempts": withRetry && maxAttempts != 0,
				"Config.RefusalPause": withRetry && pause != 0,
			})
		}
		if cfg.Duration > 5*time.Second || cfg.Rate > 200 || cfg.Processes > 4 {
			return // valid or not, too long to run in a fuzz iteration
		}
		_, runErr := simulation.Run(cfg)
		require.Equal(t, err == nil, runErr == nil, "Validate and Run disagree: %v / %v", err, runErr)
	})
}
