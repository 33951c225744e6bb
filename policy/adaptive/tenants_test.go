package adaptive_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

func tenant(name string) context.Context {
	return criticality.WithTenant(context.Background(), name)
}

// A ticket names its tenant, so that Done gives the slot back to the tenant
// that took it, whatever context the caller has at hand.
func TestATicketGivesBackItsTenantsSlot(t *testing.T) {
	l := mustNew(t, adaptive.Config{InitialLimit: 4, MinLimit: 4, MaxLimit: 4, TenantShare: 0.5, Clock: clockwork.NewFakeClock()})
	acme, globex := tenant("acme"), tenant("globex")
	first, ok := l.TryAcquire(acme)
	require.True(t, ok)
	_, ok = l.TryAcquire(acme)
	require.True(t, ok)
	_, ok = l.TryAcquire(acme)
	assert.False(t, ok, "acme holds half of the limit")
	other, ok := l.TryAcquire(globex)
	require.True(t, ok, "globex has its own half")

	l.Done(other, outcome.Verdict{})
	_, ok = l.TryAcquire(acme)
	assert.False(t, ok, "globex's slot came back to globex")
	l.Done(first, outcome.Verdict{})
	_, ok = l.TryAcquire(acme)
	assert.True(t, ok, "acme's came back to acme")
	assert.Equal(t, 2, l.InFlight())
}

// Through the stage, a tenant holding half of the limit is refused, as the
// limiter's own refusal, while another tenant is served.
func TestTheStageBoundsEachTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, adaptive.Config{InitialLimit: 4, MinLimit: 4, MaxLimit: 4, TenantShare: 0.5})
		p := pipeline.New(adaptive.Guard[int](l))
		release := make(chan struct{})
		for range 2 {
			go func() {
				_, _ = p.Execute(tenant("acme"), func(context.Context) (int, error) { <-release; return 1, nil })
			}()
		}
		synctest.Wait()
		require.Equal(t, 2, l.InFlight())
		ok := func(context.Context) (int, error) { return 1, nil }
		_, err := p.Execute(tenant("acme"), ok)
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "got %v", err)
		assert.Equal(t, "adaptive", stop.Stage)
		_, err = p.Execute(tenant("globex"), ok)
		assert.NoError(t, err, "another tenant is served")
		close(release)
		synctest.Wait()
		assert.Zero(t, l.InFlight(), "every slot came back")
		_, err = p.Execute(tenant("acme"), ok)
		assert.NoError(t, err, "acme's slots came back to acme")
		time.Sleep(time.Second) // past a revision, which must not disturb the counts
		_, err = p.Execute(tenant("acme"), ok)
		assert.NoError(t, err)
	})
}

func TestATenantsSuccessPathAllocatesNothing(t *testing.T) {
	l := mustNew(t, adaptive.Config{TenantShare: 0.5})
	p := pipeline.New(adaptive.Guard[int](l))
	ctx := tenant("acme")
	ok := func(context.Context) (int, error) { return 1, nil }
	_, _ = p.Execute(ctx, ok)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
}
