package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/slogtest"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// capture is a slog.Handler that keeps every record it handles, with the
// attributes and groups its WithAttrs and WithGroup calls added, so a test
// can read what a hook logged as a map (see entry).
type capture struct {
	level    slog.Level
	mu       *sync.Mutex
	entries  *[]captured
	segments []segment // attributes added by WithAttrs, under their groups
	groups   []string  // the groups opened by WithGroup so far
}

// segment is a run of attributes under the groups open when they were added.
type segment struct {
	groups []string
	attrs  []slog.Attr
}

// captured is one handled record with the handler's attributes.
type captured struct {
	record   slog.Record
	segments []segment
}

func newCapture(level slog.Level) *capture {
	return &capture{level: level, mu: new(sync.Mutex), entries: new([]captured)}
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.level }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	var attrs []slog.Attr
	r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
	segs := append(slices.Clone(c.segments), segment{groups: c.groups, attrs: attrs})
	c.mu.Lock()
	*c.entries = append(*c.entries, captured{record: r.Clone(), segments: segs})
	c.mu.Unlock()
	return nil
}

func (c *capture) WithAttrs(attrs []slog.Attr) slog.Handler {
	d := *c
	d.segments = append(slices.Clone(c.segments), segment{groups: c.groups, attrs: slices.Clone(attrs)})
	return &d
}

func (c *capture) WithGroup(name string) slog.Handler {
	if name == "" {
		return c
	}
	d := *c
	d.groups = append(slices.Clone(c.groups), name)
	return &d
}

// all returns what was captured so far, as maps.
func (c *capture) all() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]map[string]any, len(*c.entries))
	for i, e := range *c.entries {
		out[i] = e.entry()
	}
	return out
}

// entry is the record as slogtest reads one: time, level and msg at the top,
// every attribute under its groups, values resolved, empty groups left out.
func (e captured) entry() map[string]any {
	m := map[string]any{slog.LevelKey: e.record.Level, slog.MessageKey: e.record.Message}
	if !e.record.Time.IsZero() {
		m[slog.TimeKey] = e.record.Time
	}
	for _, s := range e.segments {
		sub := map[string]any{}
		addAttrs(sub, s.attrs)
		if len(sub) == 0 {
			continue
		}
		at := m
		for _, g := range s.groups {
			next, ok := at[g].(map[string]any)
			if !ok {
				next = map[string]any{}
				at[g] = next
			}
			at = next
		}
		for k, v := range sub {
			at[k] = v
		}
	}
	return m
}

func addAttrs(m map[string]any, attrs []slog.Attr) {
	for _, a := range attrs {
		v := a.Value.Resolve()
		if a.Key == "" && v.Any() == nil {
			continue
		}
		if v.Kind() == slog.KindGroup {
			sub := map[string]any{}
			addAttrs(sub, v.Group())
			if len(sub) == 0 {
				continue
			}
			if a.Key == "" {
				for k, x := range sub {
					m[k] = x
				}
				continue
			}
			m[a.Key] = sub
			continue
		}
		m[a.Key] = v.Any()
	}
}

// TestCaptureIsAHandler holds the test handler to slog's contract, so that
// what the tests below read through it is what a real handler would write.
func TestCaptureIsAHandler(t *testing.T) {
	var c *capture
	slogtest.Run(t, func(*testing.T) slog.Handler {
		c = newCapture(slog.LevelDebug)
		return c
	}, func(t *testing.T) map[string]any {
		all := c.all()
		require.Len(t, all, 1)
		return all[0]
	})
}

// TestLogEventsLogsEveryEvent logs one of each of the module's events through
// the hook and reads back the level, message and attributes of each.
func TestLogEventsLogsEveryEvent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	boom := errors.New("boom")
	src := pipeline.Source{Pipeline: "payments", Stage: "retry", Name: "payments"}
	cases := []struct {
		event pipeline.Event
		level slog.Level
		want  map[string]any
	}{
		{pipeline.AttemptFinished{Attempt: 2, Verdict: outcome.Verdict{Kind: outcome.Transient}, Duration: time.Second, Err: boom},
			slog.LevelDebug, map[string]any{"attempt": int64(2), "verdict": "transient", "duration": time.Second, "err": "boom"}},
		{pipeline.AttemptFinished{Attempt: 1, Duration: time.Millisecond},
			slog.LevelDebug, map[string]any{"attempt": int64(1), "verdict": "ok", "duration": time.Millisecond}},
		// A breaker's refusal the retry passes on: a warning where it was made
		// (TestARefusalPassedOnIsOneWarning), not again here.
		{pipeline.Stopped{Err: &pipeline.StopError{Stage: "breaker", Name: "payments", Reason: pipeline.DependencyUnavailable, RetryAfter: 5 * time.Second}},
			slog.LevelDebug, map[string]any{"stage": "breaker", "name": "payments", "reason": "dependency unavailable", "retry_after": 5 * time.Second}},
		{pipeline.Stopped{Err: &pipeline.StopError{Stage: "retry", Name: "payments", Reason: pipeline.BudgetExhausted, Attempts: 1, Err: boom}},
			slog.LevelWarn, map[string]any{"stage": "retry", "name": "payments", "reason": "retry budget exhausted", "attempts": int64(1), "err": "boom"}},
		{pipeline.Stopped{Err: &pipeline.StopError{Stage: "retry", Name: "payments", Reason: pipeline.AttemptsExhausted, Attempts: 3, Err: boom}},
			slog.LevelInfo, map[string]any{"stage": "retry", "name": "payments", "reason": "attempts exhausted", "attempts": int64(3), "err": "boom"}},
		{pipeline.Stopped{Err: &pipeline.StopError{Stage: "timeout", Reason: pipeline.Canceled, Cause: context.Canceled}},
			slog.LevelDebug, map[string]any{"stage": "timeout", "name": "", "reason": "canceled", "cause": "context canceled"}},
		{pipeline.Abandoned{Attempt: 1, Grace: time.Second},
			slog.LevelWarn, map[string]any{"attempt": int64(1), "grace": time.Second}},
		{pipeline.LateReturn{Attempt: 1, After: time.Minute},
			slog.LevelInfo, map[string]any{"attempt": int64(1), "after": time.Minute}},
		{retry.Scheduled{Attempt: 2, Delay: 100 * time.Millisecond, Verdict: outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(time.Second), Err: boom},
			slog.LevelDebug, map[string]any{"attempt": int64(2), "delay": 100 * time.Millisecond, "verdict": "throttled", "retry_after": time.Second, "err": "boom"}},
		{hedge.Hedged{Attempt: 1, Hedge: 1, Delay: 20 * time.Millisecond},
			slog.LevelDebug, map[string]any{"attempt": int64(1), "hedge": int64(1), "delay": 20 * time.Millisecond}},
		{hedge.Skipped{Attempt: 1, Why: "budget"},
			slog.LevelDebug, map[string]any{"attempt": int64(1), "why": "budget"}},
		{timeout.TimedOut{Timeout: 10 * time.Second},
			slog.LevelInfo, map[string]any{"timeout": 10 * time.Second}},
		{breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseConsecutiveFailures, Break: 15 * time.Second, At: at},
			slog.LevelWarn, map[string]any{"from": "closed", "to": "open", "cause": "consecutive failures", "break": 15 * time.Second, "at": at}},
		{breaker.Transition{From: breaker.HalfOpen, To: breaker.Recovering, Cause: breaker.CauseProbesSucceeded, At: at},
			slog.LevelInfo, map[string]any{"from": "half-open", "to": "recovering", "cause": "probes succeeded", "at": at}},
		{breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseFailureRatio, Break: time.Second, At: at, Shadow: true},
			slog.LevelWarn, map[string]any{"from": "closed", "to": "open", "cause": "failure ratio", "break": time.Second, "at": at, "shadow": true}},
		{breaker.Rejection{State: breaker.Open, RetryAfter: 3 * time.Second, At: at},
			slog.LevelWarn, map[string]any{"state": "open", "retry_after": 3 * time.Second, "at": at}},
		{breaker.Rejection{State: breaker.Open, RetryAfter: 3 * time.Second, At: at, Shadow: true},
			slog.LevelInfo, map[string]any{"state": "open", "retry_after": 3 * time.Second, "at": at, "shadow": true}},
	}
	h := newCapture(slog.LevelDebug)
	hook := pipeline.LogEvents(slog.New(h))
	for _, c := range cases {
		hook(context.Background(), src, c.event)
	}
	got := h.all()
	require.Len(t, got, len(cases))
	for i, c := range cases {
		assert.Equal(t, map[string]any{
			slog.LevelKey:   c.level,
			slog.MessageKey: c.event.Name(),
			slog.TimeKey:    got[i][slog.TimeKey],
			"pipeline":      "payments",
			"stage":         "retry",
			"name":          "payments",
			"event":         c.want,
		}, got[i], "event %d, %T", i, c.event)
	}
}

// TestLogEventsHonoursTheLevel checks that events below the handler's level
// are not logged, and that the context of the event reaches the handler.
func TestLogEventsHonoursTheLevel(t *testing.T) {
	h := newCapture(slog.LevelInfo)
	hook := pipeline.LogEvents(slog.New(h))
	hook(context.Background(), pipeline.Source{}, pipeline.AttemptFinished{Attempt: 1})
	hook(context.Background(), pipeline.Source{}, retry.Scheduled{Attempt: 2})
	hook(context.Background(), pipeline.Source{Stage: "breaker"}, breaker.Rejection{State: breaker.Open})
	got := h.all()
	require.Len(t, got, 1)
	assert.Equal(t, "breaker.rejection", got[0][slog.MessageKey])
}

// custom is an event of a user's own stage, which says nothing of its level.
type custom struct{}

func (custom) Name() string { return "custom" }

// TestLogEventsLogsOtherEventsAtInfo checks an event from outside the module:
// Info, with the event under "event" as it is.
func TestLogEventsLogsOtherEventsAtInfo(t *testing.T) {
	h := newCapture(slog.LevelDebug)
	pipeline.LogEvents(slog.New(h))(context.Background(), pipeline.Source{Stage: "mine"}, custom{})
	got := h.all()
	require.Len(t, got, 1)
	assert.Equal(t, slog.LevelInfo, got[0][slog.LevelKey])
	assert.Equal(t, custom{}, got[0]["event"])
}

// TestLogEventsThroughAPipeline runs a call that fails once and then
// succeeds through a pipeline with the hook, as a user would set it up, on
// virtual time.
func TestLogEventsThroughAPipeline(t *testing.T) {
	synctest.Test(t, logThroughAPipeline)
}

func logThroughAPipeline(t *testing.T) {
	h := newCapture(slog.LevelDebug)
	r, err := retry.New[string](retry.Config{Name: "svc", Backoff: retry.Constant{}})
	require.NoError(t, err)
	p := pipeline.New[string](r).With(pipeline.Options[string]{Name: "svc", OnEvent: pipeline.LogEvents(slog.New(h))})
	calls := 0
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("connection reset")
		}
		return "ok", nil
	})
	require.NoError(t, err)
	var msgs []string
	for _, e := range h.all() {
		msgs = append(msgs, e[slog.MessageKey].(string)+" "+e["stage"].(string))
	}
	assert.Equal(t, []string{"attempt pipeline", "retry.scheduled retry", "attempt pipeline"}, msgs)
}

// A refusal is one warning: the breaker stage's stop is logged at Warn, and
// the retry outside, which passes the same stop on, is logged at Debug.
func TestARefusalPassedOnIsOneWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newCapture(slog.LevelDebug)
		b, err := breaker.New(breaker.Config{Name: "svc", ConsecutiveFailures: 1})
		require.NoError(t, err)
		r, err := retry.New[string](retry.Config{Name: "svc", RefusalPause: -1})
		require.NoError(t, err)
		p := pipeline.New[string](r, breaker.Guard[string](b)).With(pipeline.Options[string]{Name: "svc", OnEvent: pipeline.LogEvents(slog.New(h))})
		b.Isolate()
		_, err = p.Execute(t.Context(), func(context.Context) (string, error) { return "ok", nil })
		require.ErrorIs(t, err, pipeline.DependencyUnavailable)
		var stops []string
		for _, e := range h.all() {
			if e[slog.MessageKey] == "stopped" {
				stops = append(stops, e[slog.LevelKey].(slog.Level).String()+" "+e["stage"].(string))
			}
		}
		assert.Equal(t, []string{"WARN breaker", "DEBUG retry"}, stops)
	})
}

// TestLogEventsNilLoggerUsesTheDefault checks that a nil logger logs through
// slog.Default, read when the event comes.
func TestLogEventsNilLoggerUsesTheDefault(t *testing.T) {
	h := newCapture(slog.LevelDebug)
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
	pipeline.LogEvents(nil)(context.Background(), pipeline.Source{}, pipeline.LateReturn{Attempt: 1})
	assert.Len(t, h.all(), 1)
}

// Every event type of the module logs as a group of its own and says its
// level, those of every stage package included.
func TestEveryEventOfTheModuleLogs(t *testing.T) {
	for _, e := range []pipeline.Event{
		pipeline.AttemptFinished{}, pipeline.Stopped{Err: &pipeline.StopError{}}, pipeline.Abandoned{}, pipeline.LateReturn{},
		retry.Scheduled{}, hedge.Hedged{}, hedge.Skipped{}, hedge.Won{}, timeout.TimedOut{}, breaker.Transition{}, breaker.Rejection{},
		pipeline.Waited{}, adaptive.Revision{},
		fallback.Executed{}, fault.Injected{},
	} {
		_, logs := e.(slog.LogValuer)
		_, leveled := e.(pipeline.Leveled)
		assert.True(t, logs && leveled, "%T: LogValuer %v, Leveled %v", e, logs, leveled)
	}
}

// A wait logs its queue and limit only from a gate that reports them.
func TestWaitedLogValue(t *testing.T) {
	assert.Equal(t, "[wait=1ms]", pipeline.Waited{Wait: time.Millisecond}.LogValue().String())
	assert.Equal(t, "[wait=1ms queued=2 limit=8]", pipeline.Waited{Wait: time.Millisecond, Queued: 2, Limit: 8}.LogValue().String())
	assert.Equal(t, slog.LevelDebug, pipeline.Waited{}.Level())
}
