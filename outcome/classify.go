package outcome

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// ErrTimeout is matched, with errors.Is, by the errors our own timeout stages
// install as their context's cause. An attempt that ends because of it is
// Transient; an attempt that ends because of the caller's own deadline is not.
var ErrTimeout = errors.New("pipeline: timeout")

// Classifier is a caller's own rule for an attempt's result and error. It returns
// false when it has no opinion, so the built-in rules apply. It is called once per
// attempt, with the error nil for a returned value, and must be safe for
// concurrent use.
type Classifier[T any] func(value T, err error) (Verdict, bool)

// Classify gives one attempt its verdict. ctx is the context the attempt ran with,
// value and err what it returned, and c the caller's classifier (nil for none).
// The rules, first match wins:
//
//  1. An error while ctx is done for a reason other than our own timeout is the
//     caller's cancellation: Permanent, marked Canceled.
//  2. A verdict attached at the source with [Mark] and friends.
//  3. The caller's classifier, for values and errors alike.
//  4. No error: OK.
//  5. The well-known shapes of [Of], and then Transient for anything unrecognised.
func Classify[T any](ctx context.Context, value T, err error, c Classifier[T]) Verdict {
	if err != nil {
		if CallerCanceled(ctx) {
			return Verdict{Kind: Permanent, Canceled: true}
		}
		if v, ok := Marked(err); ok {
			return v
		}
	}
	if c != nil {
		if v, ok := c(value, err); ok {
			return v
		}
	}
	if err == nil {
		return Verdict{}
	}
	return Verdict{Kind: Transient}
}

// CallerCanceled reports whether ctx is done for a reason other than our own
// timeout: the caller canceled it or its own deadline passed.
func CallerCanceled(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrTimeout)
}

// Of classifies an error on its own, without a context: nil is OK, a marked error
// has its mark, the shapes below are Transient, and so is everything else.
//
// Recognised as Transient: our own timeout ([ErrTimeout]); any error with a
// Timeout() bool method that returns true, which covers net.Error timeouts,
// os.ErrDeadlineExceeded and context.DeadlineExceeded; connection refused, reset
// and aborted; a broken pipe; and io.ErrUnexpectedEOF (the peer hung up mid-reply).
//
// An unrecognised error is Transient too, because an error we cannot read is more
// likely the dependency's trouble than the caller's, and because classing it as
// Permanent would silently switch off retries and the breaker for every error a
// caller forgot to classify. Mark errors you know are the caller's own fault with
// [MarkPermanent], or supply a [Classifier].
func Of(err error) Verdict {
	if err == nil {
		return Verdict{}
	}
	if v, ok := Marked(err); ok {
		return v
	}
	return Verdict{Kind: Transient}
}

// Recognized reports whether err matches one of the well-known shapes [Of] knows,
// as opposed to being Transient only because nothing recognised it. A classifier
// that wants unrecognised errors to be Permanent can use it:
//
//	if err != nil && !outcome.Recognized(err) {
//		return outcome.Verdict{Kind: outcome.Permanent}, true
//	}
func Recognized(err error) bool {
	if errors.Is(err, ErrTimeout) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	if t, ok := errors.AsType[timeoutError](err); ok && t.Timeout() {
		return true
	}
	for _, errno := range connectionErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true
	}
	return false
}

// timeoutError is the shape net.Error, os.ErrDeadlineExceeded and
// context.DeadlineExceeded share.
type timeoutError interface {
	error
	Timeout() bool
}

var connectionErrnos = [...]error{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
}
