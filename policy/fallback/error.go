package fallback

// Error is the error of a call whose fallback failed: Err is what Func
// returned, Original the error of the result it was asked to replace (nil if
// When chose a success). Both are reachable with errors.Is and errors.As, so
// the breaker's refusal or the retry's *pipeline.StopError is still found
// through it.
type Error struct {
	Err      error
	Original error
}

// Error says that the fallback failed, and what it was replacing.
func (e *Error) Error() string {
	if e.Original == nil {
		return "fallback: " + e.Err.Error()
	}
	return "fallback: " + e.Err.Error() + " (replacing: " + e.Original.Error() + ")"
}

// Unwrap returns Func's error and the original one, whichever are set.
func (e *Error) Unwrap() []error {
	if e.Original == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Original}
}
