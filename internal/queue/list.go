// Package queue is the one doubly linked list of the library's queues (a
// bulkhead's waiting calls, a registry's keys by age, a fleet quota's
// waiting calls, in the fleet module), and the queue by level built of it: each element embeds
// its Links, so pushing and removing allocate nothing, and removing an
// element from the middle (a call that gave up) takes constant time.
package queue

// Links is what an element of a List embeds: its neighbours in the list.
// The zero Links is in no list.
type Links[E comparable] struct {
	prev, next E
}

// Elem is an element a List holds: a pointer whose pointee embeds Links.
type Elem[E comparable] interface {
	comparable
	// Links is the element's Links.
	Links() *Links[E]
}

// List is a doubly linked list of elements, oldest first. The zero List is
// empty. Its owner serializes every call.
type List[E Elem[E]] struct {
	head, tail E
	n          int
}

// Len is the number of elements in l.
func (l *List[E]) Len() int { return l.n }

// Front is the oldest element of l, and false if l is empty.
func (l *List[E]) Front() (E, bool) { return l.head, l.n > 0 }

// Back is the newest element of l, and false if l is empty.
func (l *List[E]) Back() (E, bool) { return l.tail, l.n > 0 }

// Next is the element after e (toward the newest), and false if e is the
// newest.
func Next[E Elem[E]](e E) (E, bool) {
	var zero E
	n := e.Links().next
	return n, n != zero
}

// Prev is the element before e (toward the oldest), and false if e is the
// oldest.
func Prev[E Elem[E]](e E) (E, bool) {
	var zero E
	p := e.Links().prev
	return p, p != zero
}

// PushBack adds e, which is in no list, as the newest.
func (l *List[E]) PushBack(e E) {
	var zero E
	links := e.Links()
	links.prev, links.next = l.tail, zero
	if l.tail != zero {
		l.tail.Links().next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.n++
}

// Remove takes e, which is in l, out of it.
func (l *List[E]) Remove(e E) {
	var zero E
	links := e.Links()
	if links.prev != zero {
		links.prev.Links().next = links.next
	} else {
		l.head = links.next
	}
	if links.next != zero {
		links.next.Links().prev = links.prev
	} else {
		l.tail = links.prev
	}
	links.prev, links.next = zero, zero
	l.n--
}

// PopFront takes the oldest element out of l and returns it, and false if
// l is empty.
func (l *List[E]) PopFront() (E, bool) {
	e, ok := l.Front()
	if ok {
		l.Remove(e)
	}
	return e, ok
}
