package quota

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// shareQuota is a quota whose first fetch leases the 4 tokens Redis holds,
// and whose Redis earns no more during a test, with a stage whose calls may
// wait an hour on a fake clock.
func shareQuota(t *testing.T, shares criticality.Shares) (*spentQuota, *pipeline.Pipeline[string]) {
	t.Helper()
	h := &spentQuota{clock: clockwork.NewFakeClock()}
	h.client = newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 0.001, Burst: 4, Lease: 4,
		Processes: 1, MaxWait: time.Hour, Shares: shares, Clock: h.clock})
	h.pl = pipeline.New(Guard[string](h.q))
	require.Equal(t, int64(4), h.q.tokens.Load(), "the first fetch leased the bucket")
	return h, h.pl
}

// Sheddable calls spend three quarters of the lease by default; the last
// token is kept for the other levels, and a Sheddable call that waits is
// not handed it: a Critical call that arrives after it is.
func TestQuotaKeepsTheLastOfTheLeaseFromSheddableCalls(t *testing.T) {
	h, pl := shareQuota(t, criticality.Shares{})
	sheddable := criticality.With(context.Background(), criticality.Sheddable)
	for i := range 3 {
		_, err := pl.Execute(sheddable, ran)
		require.NoError(t, err, "Sheddable call %d", i)
	}
	require.Equal(t, int64(1), h.q.tokens.Load())
	waiting := h.arrive(t, sheddable)
	crit := h.start(criticality.With(context.Background(), criticality.Critical))
	require.NoError(t, crit.result(t), "the Critical call gets the last token, though it came second")
	assert.False(t, waiting.returned(), "the Sheddable call still waits")
	assert.Zero(t, h.q.tokens.Load())

	h.q.deposit(4)
	require.NoError(t, waiting.result(t), "a fresh lease serves it")
	assert.Equal(t, int64(3), h.q.tokens.Load())
}

// With the shares set to treat every level alike, a Sheddable call may
// spend the whole lease; Allow spends as a Default call, whose share is the
// whole lease by default.
func TestQuotaSharesFollowTheirConfig(t *testing.T) {
	_, pl := shareQuota(t, criticality.Shares{Default: 1, Sheddable: 1})
	sheddable := criticality.With(context.Background(), criticality.Sheddable)
	for i := range 3 {
		_, err := pl.Execute(sheddable, ran)
		require.NoError(t, err, "Sheddable call %d", i)
	}
	_, err := pl.Execute(sheddable, ran)
	require.NoError(t, err, "a share of 1 is the whole lease")

	h, _ := shareQuota(t, criticality.Shares{})
	for range 4 {
		_, ok := h.q.Allow()
		require.True(t, ok)
	}
	assert.Zero(t, h.q.tokens.Load())
}

func TestQuotaRefusesImpossibleShares(t *testing.T) {
	_, err := Config{Shares: criticality.Shares{Sheddable: 2}}.settings()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "quota: Config.Shares: criticality: Shares.Sheddable")
}

// At one instant a higher level may spend the lease whenever a lower one
// may, and none spends more of it than its share, whatever the lease, the
// shares and the tokens left.
func TestQuotaSpendsByLevel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.Float64Range(0.01, 1).Draw(t, "default")
		s := criticality.Shares{Default: d, Sheddable: rapid.Float64Range(0.01, d).Draw(t, "sheddable")}
		lease := int64(rapid.IntRange(1, 1000).Draw(t, "lease"))
		q := &Quota{s: settings{lease: lease, shares: s}}
		n := int64(rapid.IntRange(1, int(lease)).Draw(t, "tokens"))
		prev := false
		for l := criticality.Sheddable; l <= criticality.Critical; l++ {
			ok := q.spends(l, n)
			if prev && !ok {
				t.Fatalf("%v may not spend with %d of %d left while a lower level may", l, n, lease)
			}
			if ok && !s.Admits(l, float64(lease-n), float64(lease)) {
				t.Fatalf("%v spends with %d of %d left, beyond its share", l, n, lease)
			}
			prev = ok
		}
		if !q.spends(criticality.Critical, n) {
			t.Fatalf("Critical may not spend a token of %d left", n)
		}
	})
}
