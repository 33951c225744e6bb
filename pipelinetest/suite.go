package pipelinetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resilience-go/pipeline"
)

// Run runs the conformance checks against policies built by newPolicy. value is
// what the work returns on success; the checks compare it with what Execute
// returns using ==, so T must be comparable at run time. Run is RunWith with a
// Config that sets only NewPolicy and Value.
func Run[T comparable](t *testing.T, newPolicy func() pipeline.Policy[T], value T) {
	t.Helper()
	RunWith(t, Config[T]{NewPolicy: newPolicy, Value: value})
}

// Config is what [RunWith] needs to run the suite, and the hooks through which
// the caller observes the run. Only NewPolicy is required.
type Config[T comparable] struct {
	// NewPolicy builds the policy under test. Each check calls it inside its
	// own synctest bubble, so that the policy's timers and channels belong to
	// that bubble.
	NewPolicy func() pipeline.Policy[T]
	// Value is what the work returns on success; the checks compare it with
	// what Execute returns using ==. The zero value is a valid choice.
	Value T
	// OnEvent, if not nil, is the event hook ([pipeline.Options].OnEvent) of
	// every pipeline the checks build: it receives each event the policy
	// emits, with the *testing.T of the check that is running, whose Name ends
	// with the check's name ("PassesValueOfSlowWork"). It may be called from
	// several goroutines at once and must be safe for that. Nil means the
	// pipelines have no hook, and the policy is checked unobserved.
	OnEvent func(t *testing.T, e pipeline.Event)
	// After, if not nil, runs once every check has run, with the *testing.T
	// given to RunWith: the place to assert what OnEvent saw across the run,
	// such as that a hedge was sent at least once.
	After func(t *testing.T)
}

// RunWith runs the conformance checks described in the package documentation,
// each as a subtest of t in a synctest bubble of its own, then calls
// cfg.After.
func RunWith[T comparable](t *testing.T, cfg Config[T]) {
	t.Helper()
	if cfg.NewPolicy == nil {
		t.Fatal("pipelinetest: Config.NewPolicy is nil")
	}
	s := suite[T]{Config: cfg}
	for _, c := range []struct {
		name string
		run  func(*check[T])
	}{
		{"PassesValue", (*check[T]).passesValue},
		{"PassesValueOfSlowWork", (*check[T]).passesValueOfSlowWork},
		{"PassesError", (*check[T]).passesError},
		{"ReportsFailures", (*check[T]).reportsFailures},
		{"PropagatesContext", (*check[T]).propagatesContext},
		{"ReturnsPromptlyWhenCanceled", (*check[T]).returnsPromptlyWhenCanceled},
		{"RefusesCanceledContext", (*check[T]).refusesCanceledContext},
		{"ReturnsPromptlyWhenSaturated", (*check[T]).returnsPromptlyWhenSaturated},
		{"NoLockAcrossNext", (*check[T]).noLockAcrossNext},
		{"LeavesNoGoroutine", (*check[T]).leavesNoGoroutine},
		{"PropagatesPanic", (*check[T]).propagatesPanic},
		{"ConcurrentUse", (*check[T]).concurrentUse},
	} {
		t.Run(c.name, func(t *testing.T) { s.run(t, c.run) })
	}
	if cfg.After != nil {
		cfg.After(t)
	}
}

// suite is one run of the checks.
type suite[T comparable] struct {
	Config[T]
}

// check is the state of one check, in its own bubble.
type check[T comparable] struct {
	suite[T]
	t *testing.T // the bubble's
	// ctx is the parent of every context the check gives Execute; the suite
	// cancels it once the check is over.
	ctx context.Context
	// release is closed once the check is over: every work function of the
	// suite that blocks returns then, even if the stage detached it from its
	// context, so that a goroutine a broken stage left running the work ends.
	release chan struct{}
	// known holds the goroutines not to report as left behind: those of the
	// bubble before the check, and those already reported.
	known map[string]bool
}

// run runs one check in a bubble of its own. Once the check returns it
// reports the goroutines the check left behind, with their stacks; then it
// releases the suite's work and lets virtual time pass, so that those
// goroutines can end before the bubble closes. One blocked for good on
// something of the stage's own cannot be ended: synctest.Test then panics,
// and run turns that panic into this check's failure, so that the other
// checks and tests still run.
func (s suite[T]) run(t *testing.T, f func(*check[T])) {
	var id string // the bubble's number, to find its goroutines from outside it
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if err, ok := r.(error); !ok || !strings.HasPrefix(err.Error(), "deadlock: ") {
			panic(r)
		}
		t.Errorf("goroutines this check left behind are blocked for good on something only the stage "+
			"could end, so its bubble could not close (synctest: %v); they stay parked until the test "+
			"binary exits:\n%s", r, parked(id))
	}()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		c := &check[T]{suite: s, t: t, ctx: ctx, release: make(chan struct{})}
		id = bubbled()[0].bubble
		c.known = ids()
		base := len(c.known)
		defer func() {
			c.noneLeft()
			close(c.release)
			cancel()
			drain(base)
		}()
		f(c)
	})
}

// noneLeft fails the check and returns true if, once every goroutine of the
// bubble has done all it can, there are goroutines it does not know; it then
// knows them, so that each is reported once.
func (c *check[T]) noneLeft() bool {
	c.t.Helper()
	settle()
	var left []goroutine
	for _, g := range bubbled() {
		if !c.known[g.id] {
			c.known[g.id] = true
			left = append(left, g)
		}
	}
	if left == nil {
		return false
	}
	c.t.Errorf("%d goroutine(s) still running after Execute returned; their stacks:\n%s", len(left), stacks(left))
	return true
}

// drain lets virtual time pass, in doubling steps up to about an hour in
// all, until at most before goroutines are left in the bubble, so that
// goroutines left behind that wait for a timer end before the bubble closes. It stops
// early if a goroutine waits on something the bubble does not own, such as a
// lock: time cannot pass then.
func drain(before int) {
	for step := time.Millisecond; step <= time.Hour; step *= 2 {
		if settle() != nil || Goroutines() <= before {
			return
		}
		time.Sleep(step)
	}
}

// parked returns the stacks of the goroutines still in bubble number id,
// which has closed; call it from outside the bubble.
func parked(id string) []byte { return stacks(inBubble(goroutines(), id)) }

// pipeline builds a pipeline of one fresh policy, with the caller's event
// hook if there is one.
func (c *check[T]) pipeline() *pipeline.Pipeline[T] {
	p := pipeline.New(c.NewPolicy())
	if c.OnEvent != nil {
		t, hook := c.t, c.OnEvent
		p = p.With(pipeline.Options[T]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) { hook(t, e) }})
	}
	return p
}

// errReleased is what a work function returns if the suite released it
// before its context was done.
var errReleased = errors.New("pipelinetest: the work was released by the suite after its check ended")

// wait blocks until ctx is done, returning ctx.Err(), or until the suite
// releases the work.
func (c *check[T]) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.release:
		return errReleased
	}
}

// sleep waits d on the bubble's clock, as slow work does, unless ctx is done
// first or the suite releases the work.
func (c *check[T]) sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.release:
		return errReleased
	}
}

// call is one Execute running on a goroutine of its own.
type call[T any] struct {
	entered  chan struct{} // closed the first time the call's work runs
	once     sync.Once
	returned chan struct{} // closed when Execute has returned value and err
	value    T
	err      error
}

// start runs Execute(ctx, work) on a goroutine of its own. The work may run
// any number of times, at once.
func start[T any](p *pipeline.Pipeline[T], ctx context.Context, work pipeline.Func[T]) *call[T] {
	c := &call[T]{entered: make(chan struct{}), returned: make(chan struct{})}
	go func() {
		defer close(c.returned)
		c.value, c.err = p.Execute(ctx, func(ctx context.Context) (T, error) {
			c.once.Do(func() { close(c.entered) })
			return work(ctx)
		})
	}()
	return c
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// reachedWork waits until the call runs its work or returns, at most patience
// on the bubble's clock, and reports whether the work ran. If it did not, it
// explains why on t.
func (cl *call[T]) reachedWork(t *testing.T, what string) bool {
	t.Helper()
	timer := time.NewTimer(patience)
	defer timer.Stop()
	select {
	case <-cl.entered:
		return true
	case <-cl.returned:
		if closed(cl.entered) {
			return true
		}
		t.Errorf("%s: Execute returned (%v, %v) without running the work", what, cl.value, cl.err)
	case <-timer.C:
		t.Errorf("%s: Execute neither ran the work nor returned within %v", what, patience)
	}
	return false
}

// await waits until the call returns, at most d on the bubble's clock, and
// reports whether it did.
func (cl *call[T]) await(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-cl.returned:
		return true
	case <-timer.C:
		return false
	}
}

// patience is how long, on the bubble's clock, a check waits for something
// that a conforming stage does without waiting at all.
const patience = time.Minute
