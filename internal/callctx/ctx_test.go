package callctx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type key struct{}

var errParent = errors.New("parent's cause")

// A Ctx answers every question as a context.WithCancel child of its parent
// would, whether or not anything has waited on it.
func TestCtxAnswersAsAWithCancelChild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, stop := context.WithTimeoutCause(context.WithValue(t.Context(), key{}, "v"), time.Second, errParent)
		defer stop()

		c := WithCancel(parent, nil, nil)
		assert.NoError(t, c.Err())
		assert.NoError(t, context.Cause(c))
		assert.Equal(t, "v", c.Value(key{}))
		want, _ := parent.Deadline()
		got, ok := c.Deadline()
		assert.True(t, ok)
		assert.Equal(t, want, got)

		c.Cancel()
		assert.ErrorIs(t, c.Err(), context.Canceled)
		assert.ErrorIs(t, context.Cause(c), context.Canceled)
		assert.Equal(t, "v", c.Value(key{}))
		select {
		case <-c.Done():
		default:
			t.Fatal("a canceled Ctx's Done is not closed")
		}
		assert.NoError(t, parent.Err(), "canceling a Ctx leaves its parent alone")
	})
}

func TestCtxFollowsItsParent(t *testing.T) {
	for _, asked := range []bool{false, true} { // Done asked before the parent ends, or not
		synctest.Test(t, func(t *testing.T) {
			parent, stop := context.WithTimeoutCause(t.Context(), time.Second, errParent)
			defer stop()
			c := WithCancel(parent, nil, nil)
			if asked {
				_ = c.Done()
			}
			time.Sleep(2 * time.Second) // virtual: the parent's deadline passes
			assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
			assert.ErrorIs(t, context.Cause(c), errParent)
			<-c.Done()
			c.Cancel() // too late: the parent's cause stays
			assert.ErrorIs(t, context.Cause(c), errParent)
		})
	}
}

func TestContextsDerivedFromACtxEndWithItWithoutAGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := WithCancel(t.Context(), nil, nil)
		child, cancel := context.WithCancel(c)
		defer cancel()
		fired := make(chan struct{})
		context.AfterFunc(c, func() { close(fired) })
		synctest.Wait()
		c.Cancel()
		<-child.Done()
		<-fired
		assert.ErrorIs(t, context.Cause(child), context.Canceled)
	})
}

func TestACtxNobodyWaitsOnCostsOneAllocation(t *testing.T) {
	parent, stop := context.WithTimeout(context.Background(), time.Hour)
	defer stop()
	allocs := testing.AllocsPerRun(100, func() {
		c := WithCancel(parent, nil, nil)
		_ = c.Err()
		c.Cancel()
	})
	require.Equal(t, 1.0, allocs, "the Ctx itself")
}

// A lent context takes the first deadline derived from it, once, unless
// something touched it first: then WithDeadline makes a child, as it does of
// any other parent.
func TestALentContextTakesTheDeadlineOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSchedule(nil)
		errOurs := errors.New("ours")
		derive := func(parent context.Context, d time.Duration) *Ctx {
			now := s.Now()
			return WithDeadline(parent, s, now, now.Add(d), errOurs)
		}

		lent := WithCancel(t.Context(), key{}, 7)
		lent.Lend()
		taken := derive(lent, time.Second)
		require.Same(t, lent, taken)
		assert.Equal(t, 7, taken.Value(key{}))
		deadline, ok := taken.Deadline()
		assert.True(t, ok && deadline.Equal(time.Now().Add(time.Second)))
		assert.NotSame(t, lent, derive(lent, time.Second), "taken once")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.ErrorIs(t, taken.Err(), context.DeadlineExceeded)
		assert.Same(t, errOurs, context.Cause(taken))

		for name, touch := range map[string]func(*Ctx){
			"asked for Done":  func(c *Ctx) { c.Done() },
			"ended":           func(c *Ctx) { c.Cancel() },
			"registered with": func(c *Ctx) { context.AfterFunc(c, func() {}) },
			"derived from":    func(c *Ctx) { WithCancel(c, nil, nil).Done() },
		} {
			c := WithCancel(t.Context(), nil, nil)
			c.Lend()
			touch(c)
			assert.NotSame(t, c, derive(c, time.Second), name)
		}
		notLent := WithCancel(t.Context(), nil, nil)
		assert.NotSame(t, notLent, derive(notLent, time.Second))
	})
}

// A reading of the attempt's end is kept on a context only once a timeout
// right inside the stage that lent it has taken it: on any other context
// it would not be the lender's to read.
func TestOnlyATakenContextKeepsTheAttemptsEnd(t *testing.T) {
	s := NewSchedule(nil)
	plain := WithCancel(context.Background(), nil, nil)
	plain.Returned(5)
	_, ok := plain.ReturnedAt()
	assert.False(t, ok, "not lent")

	lent := WithCancel(context.Background(), nil, nil)
	lent.Lend()
	lent.Returned(5)
	_, ok = lent.ReturnedAt()
	assert.False(t, ok, "lent but not taken")

	now := s.Now()
	require.Same(t, lent, WithDeadline(lent, s, now, now.Add(time.Hour), nil), "taken")
	lent.Returned(7)
	r, ok := lent.ReturnedAt()
	assert.True(t, ok)
	assert.Equal(t, time.Duration(7), r)
	lent.Cancel()
}
