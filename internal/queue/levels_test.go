package queue

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/criticality"
)

type item struct {
	id    int
	level criticality.Level
	links Links[*item]
}

func (i *item) Links() *Links[*item] { return &i.links }

// Levels serves the highest level first and, within a level, the oldest
// first, and Last is the newest of the lowest level, through any sequence of
// pushes and removals from anywhere, as a slice kept in arrival order says.
func TestLevelsMatchTheirModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q Levels[*item]
		var model []*item // arrival order
		next := 0
		t.Repeat(map[string]func(*rapid.T){
			"push": func(t *rapid.T) {
				it := &item{id: next, level: criticality.Level(rapid.IntRange(1, 3).Draw(t, "level"))}
				next++
				q.Push(it.level, it)
				model = append(model, it)
			},
			"remove": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip("empty")
				}
				i := rapid.IntRange(0, len(model)-1).Draw(t, "i")
				q.Remove(model[i].level, model[i])
				model = slices.Delete(model, i, i+1)
			},
			"": func(t *rapid.T) {
				if q.Len() != len(model) {
					t.Fatalf("Len %d, want %d", q.Len(), len(model))
				}
				var first, last *item
				for _, it := range model {
					if first == nil || it.level > first.level {
						first = it
					}
					if last == nil || it.level <= last.level {
						last = it
					}
				}
				f, fl, ok := q.Front()
				if ok != (first != nil) || ok && (f != first || fl != first.level) {
					t.Fatalf("Front %v, want %v", f, first)
				}
				l, ll, ok := q.Last()
				if ok != (last != nil) || ok && (l != last || ll != last.level) {
					t.Fatalf("Last %v, want %v", l, last)
				}
				for lv := criticality.Sheddable; lv <= criticality.Critical; lv++ {
					want := slices.ContainsFunc(model, func(it *item) bool { return it.level > lv })
					if q.Above(lv) != want {
						t.Fatalf("Above(%v) = %v", lv, !want)
					}
				}
			},
		})
	})
}
