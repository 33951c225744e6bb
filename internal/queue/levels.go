package queue

import (
	"iter"

	"github.com/resilience-go/pipeline/criticality"
)

// Levels is a queue by criticality: one List per level, served from the
// highest level down and, within a level, oldest first. The zero Levels is
// empty. Its owner serializes every call.
type Levels[E Elem[E]] struct {
	lists [criticality.Levels]List[E]
	n     int
}

// Len is the number of elements of every level.
func (q *Levels[E]) Len() int { return q.n }

// Push adds e, which is in no list, as the newest of level l (Default for a
// level that does not exist).
func (q *Levels[E]) Push(l criticality.Level, e E) {
	q.lists[index(l)].PushBack(e)
	q.n++
}

// All is every element of q, in the order q serves them, for an owner that
// changes nothing of q while it iterates.
func (q *Levels[E]) All() iter.Seq[E] {
	return func(yield func(E) bool) {
		for i := len(q.lists) - 1; i >= 0; i-- {
			for e, ok := q.lists[i].Front(); ok; e, ok = Next(e) {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// Remove takes e, which Push added at level l, out of q.
func (q *Levels[E]) Remove(l criticality.Level, e E) {
	q.lists[index(l)].Remove(e)
	q.n--
}

// Front is the element served next: the oldest of the highest level that
// has one, with its level, and false if q is empty.
func (q *Levels[E]) Front() (E, criticality.Level, bool) {
	for i := len(q.lists) - 1; i >= 0; i-- {
		if e, ok := q.lists[i].Front(); ok {
			return e, criticality.Level(i + 1), true
		}
	}
	var zero E
	return zero, 0, false
}

// Last is the element served last: the newest of the lowest level that has
// one, with its level, and false if q is empty. A full queue gives its
// place to a higher level's arrival by refusing it.
func (q *Levels[E]) Last() (E, criticality.Level, bool) {
	for i := range q.lists {
		if e, ok := q.lists[i].Back(); ok {
			return e, criticality.Level(i + 1), true
		}
	}
	var zero E
	return zero, 0, false
}

// Above reports whether an element of a level above l waits.
func (q *Levels[E]) Above(l criticality.Level) bool {
	for i := index(l) + 1; i < len(q.lists); i++ {
		if q.lists[i].Len() > 0 {
			return true
		}
	}
	return false
}

// AtOrAbove reports whether an element of level l or above waits.
func (q *Levels[E]) AtOrAbove(l criticality.Level) bool {
	return q.lists[index(l)].Len() > 0 || q.Above(l)
}

// index is l's list.
func index(l criticality.Level) int {
	if !l.Valid() {
		l = criticality.Default
	}
	return int(l) - 1
}
