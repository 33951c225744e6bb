package pipelinetest

import (
	"bytes"
	"runtime"
	"strings"
	"testing/synctest"
)

// Goroutines counts the goroutines in the calling goroutine's synctest bubble,
// the caller included. Call it only inside a bubble; after synctest.Wait, a
// difference between two counts is goroutines started and not yet ended.
func Goroutines() int {
	return len(bubbled())
}

// goroutine is one goroutine, as a stack dump shows it.
type goroutine struct {
	id     string // its number
	bubble string // the number of its synctest bubble, or "" if it is in none
	status string // the wait reason or state: "chan receive (durable)", "sync.Mutex.Lock", "running"
	stack  []byte // its header and stack
}

// bubbled returns the goroutines of the calling goroutine's synctest bubble,
// the caller first. It panics outside a bubble.
func bubbled() []goroutine {
	all := goroutines()
	self := all[0] // the first stack of a dump is the caller's
	if self.bubble == "" {
		panic("pipelinetest: Goroutines called outside a synctest bubble")
	}
	return inBubble(all, self.bubble)
}

// inBubble returns the goroutines of all that are in bubble number id.
func inBubble(all []goroutine, id string) []goroutine {
	var in []goroutine
	for _, g := range all {
		if g.bubble == id {
			in = append(in, g)
		}
	}
	return in
}

// goroutines returns every goroutine of the process, the caller first.
func goroutines() []goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var all []goroutine
	for stack := range bytes.SplitSeq(buf, []byte("\n\n")) {
		// The header reads "goroutine 7 [chan receive (durable), synctest bubble 3]:".
		header, _, _ := bytes.Cut(stack, []byte("\n"))
		id, state, _ := bytes.Cut(bytes.TrimPrefix(header, []byte("goroutine ")), []byte(" ["))
		var g goroutine
		g.id, g.stack = string(id), stack
		if _, after, ok := bytes.Cut(state, []byte(", synctest bubble ")); ok {
			n := bytes.IndexFunc(after, notDigit)
			if n < 0 {
				n = len(after)
			}
			g.bubble = string(after[:n])
		}
		state, _, _ = bytes.Cut(state, []byte(","))
		g.status = string(bytes.TrimSuffix(state, []byte("]:")))
		all = append(all, g)
	}
	return all
}

// notDigit reports whether r is not a decimal digit.
func notDigit(r rune) bool { return r < '0' || r > '9' }

// durable reports whether g is blocked in a way that only the bubble itself
// can end: synctest.Wait waits for exactly these, and virtual time passes only
// when every goroutine is so blocked.
func (g goroutine) durable() bool { return strings.Contains(g.status, "(durable)") }

// busy reports whether g is running or about to: it will block or end of its
// own accord.
func (g goroutine) busy() bool {
	switch g.status {
	case "running", "runnable", "syscall", "preempted", "copystack", "waiting", "idle":
		return true
	}
	return strings.HasPrefix(g.status, "GC ") || strings.Contains(g.status, "garbage collection")
}

// locked reports whether g waits for a sync.Mutex or a sync.RWMutex. Such a
// goroutine is not durably blocked: while it waits, synctest.Wait does not
// return and virtual time does not pass.
func (g goroutine) locked() bool {
	return strings.HasPrefix(g.status, "sync.Mutex.") || strings.HasPrefix(g.status, "sync.RWMutex.")
}

// settle waits, as synctest.Wait does, until every other goroutine of the
// bubble is blocked, but never for a goroutine that waits on something the
// bubble does not own, such as a lock: synctest.Wait would wait for that one
// forever. It returns the stacks of the goroutines so blocked (nil if there
// are none); while there are any, virtual time cannot pass, so the caller
// must not wait for it.
func settle() (stuck []byte) {
	for {
		var waiting []goroutine
		busy := false
		for _, g := range bubbled()[1:] {
			switch {
			case g.busy():
				busy = true
			case !g.durable():
				waiting = append(waiting, g)
			}
		}
		if busy {
			runtime.Gosched()
			continue
		}
		if waiting == nil {
			synctest.Wait() // returns at once; it orders what the others did before what we do next
		}
		return stacks(waiting)
	}
}

// ids returns the numbers of the goroutines of the calling goroutine's bubble.
func ids() map[string]bool {
	m := make(map[string]bool)
	for _, g := range bubbled() {
		m[g.id] = true
	}
	return m
}

// lockedStacks returns the stacks of the goroutines of the bubble that wait
// for a sync.Mutex or a sync.RWMutex; call it after settle.
func lockedStacks() []byte {
	var locked []goroutine
	for _, g := range bubbled()[1:] {
		if g.locked() {
			locked = append(locked, g)
		}
	}
	return stacks(locked)
}

// stacks returns the stacks of gs, a blank line between two, or nil if gs is
// empty.
func stacks(gs []goroutine) []byte {
	var b []byte
	for i, g := range gs {
		if i > 0 {
			b = append(b, "\n\n"...)
		}
		b = append(b, g.stack...)
	}
	return b
}
