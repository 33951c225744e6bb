package hedge

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

// The copy answers every question as a context.WithCancel child of its parent
// would, whether or not it has made that child yet.
func TestCopyContextAnswersAsAWithCancelChild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, stop := context.WithTimeoutCause(context.WithValue(t.Context(), key{}, "v"), time.Second, errParent)
		defer stop()

		c := newCopyContext(parent, 0)
		assert.NoError(t, c.Err())
		assert.NoError(t, context.Cause(c))
		assert.Equal(t, "v", c.Value(key{}))
		want, _ := parent.Deadline()
		got, ok := c.Deadline()
		assert.True(t, ok)
		assert.Equal(t, want, got)

		c.cancel()
		assert.ErrorIs(t, c.Err(), context.Canceled)
		assert.ErrorIs(t, context.Cause(c), context.Canceled)
		assert.Equal(t, "v", c.Value(key{}))
		select {
		case <-c.Done():
		default:
			t.Fatal("a canceled copy's Done is not closed")
		}
		assert.NoError(t, parent.Err(), "canceling a copy leaves its parent alone")
	})
}

func TestCopyContextFollowsItsParent(t *testing.T) {
	for _, asked := range []bool{false, true} { // Done asked before the parent ends, or not
		synctest.Test(t, func(t *testing.T) {
			parent, stop := context.WithTimeoutCause(t.Context(), time.Second, errParent)
			defer stop()
			c := newCopyContext(parent, 0)
			if asked {
				_ = c.Done()
			}
			time.Sleep(2 * time.Second) // virtual: the parent's deadline passes
			assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
			assert.ErrorIs(t, context.Cause(c), errParent)
			<-c.Done()
			c.cancel() // too late: the parent's cause stays
			assert.ErrorIs(t, context.Cause(c), errParent)
		})
	}
}

func TestContextsDerivedFromACopyEndWithItWithoutAGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCopyContext(t.Context(), 0)
		child, cancel := context.WithCancel(c)
		defer cancel()
		fired := make(chan struct{})
		context.AfterFunc(c, func() { close(fired) })
		synctest.Wait()
		c.cancel()
		<-child.Done()
		<-fired
		assert.ErrorIs(t, context.Cause(child), context.Canceled)
	})
}

func TestACopyNobodyWaitsOnCostsOneAllocation(t *testing.T) {
	parent, stop := context.WithTimeout(context.Background(), time.Hour)
	defer stop()
	allocs := testing.AllocsPerRun(100, func() {
		c := newCopyContext(parent, 0)
		_ = c.Err()
		c.cancel()
	})
	require.Equal(t, 1.0, allocs, "the copy itself, and no WithCancel")
}
