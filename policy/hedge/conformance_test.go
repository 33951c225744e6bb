package hedge_test

import (
	"path"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// hedgesSent counts the hedges the checks of one run send, by check; its
// hook is safe for concurrent use.
type hedgesSent struct {
	mu   sync.Mutex
	sent map[string]int
}

func (h *hedgesSent) hook(t *testing.T, e pipeline.Event) {
	if _, ok := e.(hedge.Hedged); ok {
		h.mu.Lock()
		h.sent[path.Base(t.Name())]++
		h.mu.Unlock()
	}
}

func (h *hedgesSent) by(check string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent[check]
}

// The suite's work takes at most 5 ms, under the default minimum delay of
// 10 ms: the stage is armed and its hedge never fires, so the checks hold the
// armed path to the rules.
func TestConformance(t *testing.T) {
	h := &hedgesSent{sent: map[string]int{}}
	pipelinetest.RunWith(t, pipelinetest.Config[string]{
		NewPolicy: func() pipeline.Policy[string] { return stage(t, hedge.Config{}) },
		Value:     "value",
		OnEvent:   h.hook,
		After: func(t *testing.T) {
			assert.Empty(t, h.sent, "hedges sent, by check")
		},
	})
}

// The same checks with a hedge due 1 ns after the first copy starts, so it is
// sent whenever time passes while the work runs: in the check whose work takes
// virtual time and in the one whose caller cancels after a while. The test
// fails if those checks send no hedge, so that the suite is known to hold the
// hedged path to its rules.
func TestConformanceWhenHedging(t *testing.T) {
	h := &hedgesSent{sent: map[string]int{}}
	pipelinetest.RunWith(t, pipelinetest.Config[string]{
		NewPolicy: func() pipeline.Policy[string] {
			return stage(t, hedge.Config{MinDelay: time.Nanosecond, Quantile: 0.01, Estimator: warm(t, 20, 0)})
		},
		Value:   "value",
		OnEvent: h.hook,
		After: func(t *testing.T) {
			for _, check := range []string{"PassesValueOfSlowWork", "ReturnsPromptlyWhenCanceled"} {
				assert.Positive(t, h.by(check), "the check %s sent no hedge", check)
			}
		},
	})
}
