package ceiling_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/ceiling"
)

// For any configuration and any measured history, a hung attempt is never
// cut before MinSamples samples are held, and once they are, it is cut at
// exactly the stage's Limit, never shorter than Floor nor longer than Cap.
// Each case runs in a synctest bubble of its own, so the time of the cut is
// measured exactly on virtual time.
func TestCutOnlyWithinFloorAndCapAndAfterMinSamples(t *testing.T) {
	seen := map[bool]int{} // cases by whether the stage was armed
	rapid.Check(t, func(rt *rapid.T) {
		cfg := ceiling.Config{
			Multiple:     rapid.SampledFrom([]float64{0, 1, 1.5, 3, 10, 1e9}).Draw(rt, "multiple"),
			Quantile:     rapid.SampledFrom([]float64{0, 0.5, 0.95, 0.99, 1}).Draw(rt, "quantile"),
			MinSamples:   rapid.IntRange(0, 80).Draw(rt, "minSamples"),
			FedElsewhere: rapid.Bool().Draw(rt, "fedElsewhere"),
		}
		if rapid.Bool().Draw(rt, "bounded") { // else the default floor and cap
			cfg.Floor = time.Duration(rapid.Int64Range(1, int64(2*time.Second)).Draw(rt, "floor"))
			cfg.Cap = cfg.Floor + time.Duration(rapid.Int64Range(0, int64(20*time.Second)).Draw(rt, "capAboveFloor"))
		}
		history := rapid.SliceOfN(rapid.Int64Range(0, int64(time.Minute)), 0, 120).Draw(rt, "samples")
		armed, msg := cutInBubble(t, cfg, history)
		if msg != "" {
			rt.Fatal(msg)
		}
		seen[armed]++
	})
	if !t.Failed() && (seen[true] == 0 || seen[false] == 0) {
		t.Fatalf("the cases missed a path: %d armed, %d unarmed", seen[true], seen[false])
	}
}

// cutInBubble runs one hung attempt through a ceiling stage built from cfg
// over an estimator holding history, in a bubble of its own, and returns what
// went wrong, or "", and whether the stage was armed.
func cutInBubble(t *testing.T, cfg ceiling.Config, history []int64) (armed bool, msg string) {
	synctest.Test(t, func(t *testing.T) {
		est, err := latency.New(latency.Config{})
		if err != nil {
			msg = err.Error()
			return
		}
		for _, d := range history {
			est.Record(est.Now(), time.Duration(d))
		}
		cfg.Estimator = est
		p, err := ceiling.New[string](cfg)
		if err != nil {
			msg = err.Error()
			return
		}
		floor, ceil := cfg.Floor, cfg.Cap
		if floor == 0 {
			floor, ceil = ceiling.DefaultFloor, ceiling.DefaultCap
		}
		minSamples := cfg.MinSamples
		if minSamples == 0 {
			minSamples = ceiling.DefaultMinSamples
		}
		n := len(history)
		var limit time.Duration
		limit, armed = p.Limit(est.Now())
		if armed != (n >= minSamples) {
			msg = fmt.Sprintf("armed %v with %d samples, MinSamples %d", armed, n, minSamples)
			return
		}
		if armed && (limit < floor || limit > ceil) {
			msg = fmt.Sprintf("limit %v outside [%v, %v]", limit, floor, ceil)
			return
		}

		patience := ceil + time.Hour // the caller's deadline, past any ceiling
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		start := time.Now()
		_, err = pipeline.New[string](p).Execute(ctx, hang)
		took := time.Since(start)
		cut := errors.Is(err, outcome.ErrTimeout)
		switch {
		case !armed && (cut || took != patience):
			msg = fmt.Sprintf("unarmed (%d samples of %d), yet the attempt ended after %v with %v", n, minSamples, took, err)
		case armed && (!cut || took != limit):
			msg = fmt.Sprintf("armed with limit %v, yet the attempt ended after %v with %v", limit, took, err)
		}
	})
	return armed, msg
}
