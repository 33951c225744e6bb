package discrete

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The queue pops every event it was given, in order of time and, at one
// time, of pushing, whatever the interleaving of pushes and pops.
func TestTheQueuePopsInOrderOfTimeThenOfPushing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type ev struct {
			at time.Duration
			n  int
		}
		var q Queue[int]
		var model []ev // pending, in push order
		n := 0
		for _, push := range rapid.SliceOf(rapid.Bool()).Draw(t, "ops") {
			if push {
				at := time.Duration(rapid.IntRange(0, 5).Draw(t, "at"))
				q.Push(at, n)
				model = append(model, ev{at, n})
				n++
				continue
			}
			at, got, ok := q.Pop()
			if len(model) == 0 {
				if ok {
					t.Fatalf("popped %d from an empty queue", got)
				}
				continue
			}
			first := slices.MinFunc(model, func(a, b ev) int {
				if a.at != b.at {
					return int(a.at - b.at)
				}
				return a.n - b.n
			})
			if !ok || got != first.n || at != first.at {
				t.Fatalf("popped %d at %v (%v), want %d at %v", got, at, ok, first.n, first.at)
			}
			model = slices.DeleteFunc(model, func(e ev) bool { return e.n == first.n })
			if q.Len() != len(model) {
				t.Fatalf("Len %d, want %d", q.Len(), len(model))
			}
		}
	})
}

func TestTheQueueDoesNotAllocateOnceGrown(t *testing.T) {
	var q Queue[[3]int64]
	for i := range 64 {
		q.Push(time.Duration(i), [3]int64{})
	}
	for range 64 {
		q.Pop()
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			q.Push(time.Duration(64-i), [3]int64{int64(i)})
		}
		for range 64 {
			q.Pop()
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations a run, want 0", allocs)
	}
}
