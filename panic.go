package pipeline

import (
	"fmt"
	"runtime/debug"
)

// PanicError carries a panic from the goroutine where a stage ran the caller's
// code to the caller's goroutine, where the stage panics again with it. Value is
// what the code panicked with; Stack is that goroutine's stack at the panic.
type PanicError struct {
	Value any
	Stack []byte
}

// NewPanicError captures the current goroutine's stack; call it from the deferred
// function that recovered v.
func NewPanicError(v any) *PanicError {
	return &PanicError{Value: v, Stack: debug.Stack()}
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
