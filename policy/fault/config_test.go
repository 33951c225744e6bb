package fault_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/fault"
)

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  fault.Config[int]
		want string
	}{
		{fault.Config[int]{Transient: -0.1}, "fault: Config.Transient is a rate and must lie in [0, 1], got -0.1"},
		{fault.Config[int]{Throttled: 1.5}, "fault: Config.Throttled is a rate and must lie in [0, 1], got 1.5"},
		{fault.Config[int]{Permanent: math.NaN()}, "fault: Config.Permanent is a rate and must lie in [0, 1], got NaN"},
		{fault.Config[int]{Value: 2}, "fault: Config.Value is a rate and must lie in [0, 1], got 2"},
		{fault.Config[int]{Latency: -1, Delay: time.Second}, "fault: Config.Latency is a rate and must lie in [0, 1], got -1"},
		{fault.Config[int]{Transient: 0.5, Throttled: 0.3, Permanent: 0.2, Value: 0.1},
			"fault: Config.Transient + Throttled + Permanent + Value must not exceed 1 (one call gets at most one of them), got 0.5 + 0.3 + 0.2 + 0.1 = 1.1"},
		{fault.Config[int]{RetryAfter: -time.Second}, "fault: Config.RetryAfter must not be negative, got -1s"},
		{fault.Config[int]{Latency: 0.1}, "fault: Config.Delay must be positive when Config.Latency is set (0.1), got 0s"},
		{fault.Config[int]{Delay: -time.Second}, "fault: Config.Delay must be positive when Config.Latency is set (0), got -1s"},
	} {
		_, err := fault.New(tc.cfg)
		assert.EqualError(t, err, tc.want)
		assert.EqualError(t, tc.cfg.Validate(), tc.want)
	}
	err := fault.Config[int]{Transient: 2, Latency: 0.5}.Validate()
	assert.Equal(t, 2, strings.Count(err.Error(), "fault: Config."), "every bad field is named: %v", err)
	for _, ok := range []fault.Config[int]{
		{},
		{Enabled: true, Transient: 0.25, Throttled: 0.25, Permanent: 0.25, Value: 0.25, Latency: 1, Delay: time.Nanosecond},
		{Delay: time.Second, RetryAfter: time.Second}, // settings kept while their fault is off
	} {
		assert.NoError(t, ok.Validate(), "%+v", ok)
	}
}
