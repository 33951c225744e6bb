// Package testcheck holds the checks that several of the module's test suites
// share: that a configuration's Validate neither panics nor blames a field the
// caller left alone, and that a panic leaves no lock held. It is internal: for
// the module's own tests only.
package testcheck

import (
	"strings"
	"testing"
	"time"
)

// Validate calls validate, a Config's Validate method, and returns its error;
// it fails the test, naming cfg, if validate panics.
func Validate(t testing.TB, cfg any, validate func() error) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Validate panicked on %+v: %v", cfg, p)
		}
	}()
	return validate()
}

// Blames checks that err, and each error joined in it, names at least one of
// the fields of set whose value is true: the fields the caller set, since a
// field left at its zero value means its default and cannot be to blame.
func Blames(t testing.TB, err error, set map[string]bool) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok { // errors.Join
		errs = j.Unwrap()
	}
	for _, e := range errs {
		named := false
		for field, isSet := range set {
			named = named || (isSet && strings.Contains(e.Error(), field))
		}
		if !named {
			t.Fatalf("error %q names none of the fields set: %v", e, set)
		}
	}
}

// PanicElsewhere runs f on a goroutine of its own and returns what f panicked
// with (nil if it returned). It fails the test if f has not finished after a
// generous watchdog, which only a lock left held by an earlier panic would
// explain.
func PanicElsewhere(t testing.TB, f func()) any {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	watchdog := time.NewTimer(10 * time.Second)
	defer watchdog.Stop()
	select {
	case v := <-done:
		return v
	case <-watchdog.C:
		t.Fatal("the call blocked: a recovered panic left a lock held")
		return nil
	}
}
