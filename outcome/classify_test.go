package outcome_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/outcome"
)

var (
	transient = outcome.Verdict{Kind: outcome.Transient}
	permanent = outcome.Verdict{Kind: outcome.Permanent}
	canceled  = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
)

// ourTimeout stands in for the timeout stage's cause.
type ourTimeout struct{}

func (ourTimeout) Error() string        { return "our timeout" }
func (ourTimeout) Is(target error) bool { return target == outcome.ErrTimeout }

func TestOfRecognisesWellKnownShapes(t *testing.T) {
	for name, err := range map[string]error{
		"our timeout":        fmt.Errorf("wrapped: %w", ourTimeout{}),
		"net timeout":        &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded},
		"deadline exceeded":  context.DeadlineExceeded,
		"connection refused": fmt.Errorf("dial: %w", syscall.ECONNREFUSED),
		"connection reset":   &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET},
		"unexpected EOF":     fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF),
	} {
		assert.True(t, outcome.Recognized(err), name)
		assert.Equal(t, transient, outcome.Of(err), name)
	}
}

func TestUnrecognisedErrorIsTransient(t *testing.T) {
	err := errors.New("something odd")
	assert.False(t, outcome.Recognized(err))
	assert.False(t, outcome.Recognized(io.EOF))
	assert.Equal(t, transient, outcome.Of(err))
}

func TestMarksWinOverShapes(t *testing.T) {
	err := outcome.MarkPermanent(fmt.Errorf("dial: %w", syscall.ECONNREFUSED))
	assert.Equal(t, permanent, outcome.Of(fmt.Errorf("context: %w", err)))
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "a mark keeps the error reachable")

	throttled := outcome.MarkThrottled(errors.New("slow down"), 3*time.Second)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(3*time.Second), outcome.Of(throttled))
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled}, outcome.Of(outcome.MarkThrottled(errors.New("x"), -time.Second)),
		"a negative hint means none")

	assert.Nil(t, outcome.MarkTransient(nil))
	assert.Equal(t, outcome.Verdict{}, outcome.Of(nil))
}

func TestClassifyOrder(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	oursFired, cancelOurs := context.WithCancelCause(context.Background())
	cancelOurs(ourTimeout{})

	always := func(v outcome.Verdict) outcome.Classifier[int] {
		return func(int, error) (outcome.Verdict, bool) { return v, true }
	}
	never := outcome.Classifier[int](func(int, error) (outcome.Verdict, bool) { return outcome.Verdict{}, false })
	throttled := outcome.Verdict{Kind: outcome.Throttled}
	plain := errors.New("plain")

	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		c    outcome.Classifier[int]
		want outcome.Verdict
	}{
		{"caller canceled beats a mark", done, outcome.MarkTransient(plain), nil, canceled},
		{"caller canceled beats the classifier", done, plain, always(throttled), canceled},
		{"caller canceled but the work succeeded", done, nil, nil, outcome.Verdict{}},
		{"our timeout is not the caller's", oursFired, context.DeadlineExceeded, nil, transient},
		{"a mark beats the classifier", live, outcome.MarkPermanent(plain), always(throttled), permanent},
		{"the classifier beats the shapes", live, syscall.ECONNRESET, always(permanent), permanent},
		{"the classifier classifies values", live, nil, always(transient), transient},
		{"a classifier without an opinion", live, plain, never, transient},
		{"no error, no classifier", live, nil, nil, outcome.Verdict{}},
	} {
		assert.Equal(t, tc.want, outcome.Classify(tc.ctx, 0, tc.err, tc.c), tc.name)
	}
}

func TestVerdictPredicates(t *testing.T) {
	for _, tc := range []struct {
		v                  outcome.Verdict
		failure, retryable bool
	}{
		{outcome.Verdict{}, false, false},
		{transient, true, true},
		{outcome.Verdict{Kind: outcome.Throttled}, false, true},
		{permanent, false, false},
		{canceled, false, false},
		{outcome.Verdict{Kind: outcome.Transient, SelfImposed: true}, false, false},
		{outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}, false, false},
	} {
		assert.Equal(t, tc.failure, tc.v.Failure(), "Failure of %v", tc.v)
		assert.Equal(t, tc.retryable, tc.v.Retryable(), "Retryable of %v", tc.v)
	}
}

func TestVerdictString(t *testing.T) {
	v := outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(2 * time.Second)
	assert.Equal(t, "throttled (retry after 2s) (self-imposed)", v.String())
	assert.Equal(t, "permanent (canceled by caller)", canceled.String())
	assert.Equal(t, "outcome.Kind(9)", outcome.Kind(9).String())
}

func TestRetryAfterPrecision(t *testing.T) {
	v := outcome.Verdict{Kind: outcome.Throttled}
	assert.Equal(t, time.Millisecond, v.WithRetryAfter(time.Nanosecond).RetryAfter(), "rounded up, never early")
	assert.Equal(t, 1500*time.Millisecond, v.WithRetryAfter(1500*time.Millisecond).RetryAfter())
	assert.Equal(t, time.Duration(0), v.WithRetryAfter(-time.Second).RetryAfter())
	assert.Equal(t, outcome.MaxRetryAfter, v.WithRetryAfter(1000*time.Hour*24).RetryAfter())
}
