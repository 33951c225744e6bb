package bulkhead_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

func TestBadConfigsAreRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   bulkhead.Config
		field string
	}{
		{"no slots", bulkhead.Config{}, "Config.MaxConcurrent"},
		{"negative slots", bulkhead.Config{MaxConcurrent: -1}, "Config.MaxConcurrent"},
		{"negative queue", bulkhead.Config{MaxConcurrent: 1, MaxQueue: -1}, "Config.MaxQueue"},
		{"negative wait", bulkhead.Config{MaxConcurrent: 1, MaxQueue: 1, MaxWait: -time.Second}, "Config.MaxWait"},
		{"wait without a queue", bulkhead.Config{MaxConcurrent: 1, MaxWait: time.Second}, "Config.MaxWait"},
		{"negative tenant share", bulkhead.Config{MaxConcurrent: 1, TenantShare: -0.5}, "Config.TenantShare"},
		{"tenant share above 1", bulkhead.Config{MaxConcurrent: 1, TenantShare: 1.01}, "Config.TenantShare"},
		{"NaN tenant share", bulkhead.Config{MaxConcurrent: 1, TenantShare: math.NaN()}, "Config.TenantShare"},
		{"negative guarantee", bulkhead.Config{MaxConcurrent: 1, Guarantees: criticality.Guarantees{Default: -0.1}}, "Config.Guarantees: criticality: Guarantees.Default"},
		{"NaN guarantee", bulkhead.Config{MaxConcurrent: 1, Guarantees: criticality.Guarantees{Sheddable: math.NaN()}}, "Config.Guarantees: criticality: Guarantees.Sheddable"},
		{"guarantees of the whole limit", bulkhead.Config{MaxConcurrent: 1, Guarantees: criticality.Guarantees{Default: 0.5, Sheddable: 0.5}}, "Config.Guarantees"},
		{"a guarantee above its share", bulkhead.Config{MaxConcurrent: 1, Guarantees: criticality.Guarantees{Sheddable: 0.8}}, "Config.Guarantees: criticality: the guarantee of sheddable calls, 0.8, is above their share 0.75"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			b, err := bulkhead.New(tc.cfg)
			assert.Nil(t, b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

func TestGuardRefusesANilBulkhead(t *testing.T) {
	assert.PanicsWithValue(t, "bulkhead: Guard: bulkhead is nil (did you ignore the error from bulkhead.New?)", func() {
		bulkhead.Guard[int](nil)
	})
}

func TestSetLimitRefusesANonPositiveLimit(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
	assert.Panics(t, func() { b.SetLimit(0) })
	assert.Equal(t, 1, b.Limit())
}

func TestAReleaseWithoutASlotPanics(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
	assert.PanicsWithValue(t, "bulkhead: Release without a slot taken", func() { b.Release(context.Background()) })
	_, ok := b.TryAcquire(context.Background())
	require.True(t, ok, "the bulkhead still works")
	_, ok = b.TryAcquire(context.Background())
	assert.False(t, ok, "and still admits one: the stray Release freed nothing")
	b.Release(context.Background())
	assert.Zero(t, b.InFlight())
}
