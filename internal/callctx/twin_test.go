package callctx

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// node is one context of a random tree, built twice: once with this
// package's contexts where the tree says so (ours), once with the context
// package's alone (twin). Both must answer alike at every step.
type node struct {
	ours, twin   context.Context
	cancel       func() // ends both, as their cancel functions
	asked        bool   // something asked ours for Done
	kind, parent int
}

const (
	oursCancel = iota
	oursDeadline
	stdCancel
	stdDeadline
)

// Every context of a random tree of ours and the context package's (ours
// under theirs, theirs under ours) answers Err, Cause, Deadline and Done as
// the same tree built with the context package alone, through random
// cancellations, waits on Done and the passing of deadlines, on a synctest
// bubble's clock.
func TestCtxAnswersAsTheContextPackage(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ops := rapid.SliceOfN(rapid.IntRange(0, 99), 1, 60).Draw(rt, "ops")
		synctest.Test(t, func(t *testing.T) { twins(t, ops) })
	})
}

func twins(t *testing.T, ops []int) {
	s := NewSchedule(clockwork.NewRealClock()) // the bubble's timers, on the list
	root, stop := context.WithCancelCause(t.Context())
	defer stop(nil)
	nodes := []*node{{ours: root, twin: root, cancel: func() { stop(errors.New("root")) }, kind: stdCancel}}
	for step, op := range ops {
		pick := nodes[op%len(nodes)]
		switch op / 20 {
		case 0, 1: // a new context below pick
			n := &node{kind: op % 4, parent: op % len(nodes)}
			cause := fmt.Errorf("deadline of node %d", len(nodes))
			// Deadlines differ by node: of two contexts due at one instant,
			// which the runtime expires first is not defined.
			d := time.Duration(1+op%7)*10*time.Millisecond + time.Duration(len(nodes))*time.Microsecond
			switch n.kind {
			case oursCancel:
				c := WithCancel(pick.ours, nil, nil)
				twin, cancel := context.WithCancel(pick.twin)
				n.ours, n.twin, n.cancel = c, twin, func() { c.Cancel(); cancel() }
			case oursDeadline:
				now := s.Now()
				c := WithDeadline(pick.ours, s, now, now.Add(d), cause)
				twin, cancel := context.WithDeadlineCause(pick.twin, now.Add(d), cause)
				n.ours, n.twin, n.cancel = c, twin, func() { c.Cancel(); cancel() }
			case stdCancel:
				c, cancel := context.WithCancel(pick.ours)
				twin, cancel2 := context.WithCancel(pick.twin)
				n.ours, n.twin, n.cancel = c, twin, func() { cancel(); cancel2() }
			case stdDeadline:
				c, cancel := context.WithTimeoutCause(pick.ours, d, cause)
				twin, cancel2 := context.WithTimeoutCause(pick.twin, d, cause)
				n.ours, n.twin, n.cancel = c, twin, func() { cancel(); cancel2() }
			}
			nodes = append(nodes, n)
		case 2: // cancel pick
			pick.cancel()
		case 3: // wait on pick's Done
			_ = pick.ours.Done()
			pick.asked = true
		case 4: // time passes
			time.Sleep(time.Duration(op%5) * 7 * time.Millisecond)
		}
		synctest.Wait() // AfterFunc callbacks run on goroutines of their own
		for i, n := range nodes {
			where := fmt.Sprintf("step %d, node %d (kind %d under %d)", step, i, n.kind, n.parent)
			assert.Equal(t, n.twin.Err(), n.ours.Err(), where)
			assert.Equal(t, context.Cause(n.twin), context.Cause(n.ours), where)
			wd, wok := n.twin.Deadline()
			gd, gok := n.ours.Deadline()
			assert.Equal(t, wok, gok, where)
			assert.True(t, wd.Equal(gd), where)
			if n.asked || n.kind >= stdCancel {
				assert.Equal(t, isClosed(n.twin.Done()), isClosed(n.ours.Done()), where)
			}
		}
	}
	for _, n := range nodes {
		n.cancel()
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
