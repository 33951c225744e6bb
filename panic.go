package pipeline

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// ErrGoexit is the value of the [PanicError] raised on the caller's goroutine
// when the caller's work, run on another goroutine (a guarded or hedged
// attempt), called runtime.Goexit, as t.FailNow does: the attempt neither
// returned nor panicked, so it has no result to report.
var ErrGoexit = errors.New("pipeline: the work called runtime.Goexit")

// PanicError carries a panic from the goroutine where a stage ran the caller's
// code to the caller's goroutine, where the stage panics again with it. Value is
// what the code panicked with; Stack is that goroutine's stack at the panic
// (debug.Stack, taken in the deferred function that recovered Value).
type PanicError struct {
	Value any
	Stack []byte
}

// Error describes the panic and where it happened.
func (p *PanicError) Error() string {
	return fmt.Sprintf("pipeline: panic: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns the panic value if it is an error, so errors.Is sees through.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// recovered turns what a deferred function recovered into the panic to raise
// again on the caller's goroutine: v itself if it is a *PanicError already, a
// new one otherwise, and one holding [ErrGoexit] when v is nil, which in a
// function that did not return means runtime.Goexit.
func recovered(v any) *PanicError {
	if v == nil {
		v = ErrGoexit
	}
	if pe, ok := v.(*PanicError); ok {
		return pe
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// contain runs hook, a caller's hook called on a goroutine of the library's
// own with nobody to raise its panic to, and logs a panic instead of letting it
// end the program.
func contain(name string, hook func()) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("pipeline: a hook panicked on a library goroutine; the panic was contained",
				"hook", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	hook()
}
