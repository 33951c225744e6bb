package pipeline

import (
	"context"
	"log/slog"

	"github.com/resilience-go/pipeline/internal/logattr"
)

// Leveled is implemented by events that say at which level [LogEvents] logs
// them. Every event of this module does: an attempt or a retry at Debug, a
// recovery at Info, a refusal or a trip at Warn. An event that does not
// implement it is logged at Info.
type Leveled interface {
	Level() slog.Level
}

// LogEvents returns an event hook, for [Options].OnEvent and a breaker's
// Config.OnEvent, that logs every event through logger with
// logger.LogAttrs(ctx, level, e.Name(), ...): the event's context (for a
// handler that reads a trace or request id from it), its level ([Leveled]),
// and the attributes pipeline, stage and name (the event's [Source], the same
// labels the OpenTelemetry module puts on its metrics), then the event itself
// under the key "event", as a group of its fields when it implements
// [slog.LogValuer] (every event of this module does). Events below the level
// the logger's handler is enabled for cost a call to Enabled and nothing
// more. A nil logger means slog.Default(), read at each event. The hook is
// safe for concurrent use; combine it with other hooks with [Hooks].
//
// A stop is logged at its level where it was made. An outer stage that
// passes it on (a retry returning a breaker's refusal, which names the
// breaker) reports it again, and that report is logged at Debug, so that one
// refusal makes one warning, as the OpenTelemetry module counts it once.
func LogEvents(logger *slog.Logger) func(context.Context, Source, Event) {
	return func(ctx context.Context, src Source, e Event) {
		l := logger
		if l == nil {
			l = slog.Default()
		}
		level := slog.LevelInfo
		if lv, ok := e.(Leveled); ok {
			level = lv.Level()
		}
		if s, ok := e.(Stopped); ok && s.Err != nil && (s.Err.Stage != src.Stage || s.Err.Name != src.Name) {
			level = slog.LevelDebug // passed on: logged where it was made
		}
		if !l.Enabled(ctx, level) {
			return
		}
		l.LogAttrs(ctx, level, e.Name(),
			slog.String("pipeline", src.Pipeline),
			slog.String("stage", src.Stage),
			slog.String("name", src.Name),
			slog.Any("event", e),
		)
	}
}

// LogValue returns the attempt as a group: attempt, verdict (its kind, with
// retry_after, self_imposed and canceled when set), duration and, for a
// failed attempt, err.
func (a AttemptFinished) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.Int("attempt", a.Attempt))
	attrs = logattr.Verdict(attrs, a.Verdict)
	attrs = append(attrs, slog.Duration("duration", a.Duration))
	attrs = appendErr(attrs, "err", a.Err)
	return slog.GroupValue(attrs...)
}

// Level returns Debug: attempts are the most frequent events.
func (AttemptFinished) Level() slog.Level { return slog.LevelDebug }

// LogValue returns the stop as a group: the stage that stopped the call and
// its name, the reason and, when set, retry_after, attempts, err and cause.
func (s Stopped) LogValue() slog.Value {
	e := s.Err
	if e == nil {
		return slog.GroupValue()
	}
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("stage", e.Stage),
		slog.String("name", e.Name),
		slog.String("reason", e.Reason.String()),
	)
	if e.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", e.RetryAfter))
	}
	if e.Attempts > 0 {
		attrs = append(attrs, slog.Int("attempts", e.Attempts))
	}
	attrs = appendErr(attrs, "err", e.Err)
	attrs = appendErr(attrs, "cause", e.Cause)
	return slog.GroupValue(attrs...)
}

// Level returns Warn for our own refusals (an open breaker, an empty budget),
// Debug for the caller's own cancellation, and Info for every other stop: the
// caller receives the error and decides how loudly to report it.
func (s Stopped) Level() slog.Level {
	if s.Err == nil {
		return slog.LevelInfo
	}
	switch s.Err.Reason {
	case DependencyUnavailable, BudgetExhausted:
		return slog.LevelWarn
	case Canceled:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// LogValue returns the abandonment as a group: attempt and grace.
func (a Abandoned) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("attempt", a.Attempt), slog.Duration("grace", a.Grace))
}

// Level returns Warn: work that ignores its context holds a goroutine and
// whatever the work holds for as long as it runs on.
func (Abandoned) Level() slog.Level { return slog.LevelWarn }

// LogValue returns the late return as a group: attempt and after.
func (l LateReturn) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("attempt", l.Attempt), slog.Duration("after", l.After))
}

// Level returns Info: the abandoned work has let its goroutine go.
func (LateReturn) Level() slog.Level { return slog.LevelInfo }

// appendErr appends err's text under key, if err is not nil.
func appendErr(attrs []slog.Attr, key string, err error) []slog.Attr {
	if err == nil {
		return attrs
	}
	return append(attrs, slog.String(key, err.Error()))
}

// LogValue returns the wait as a group: wait and, from a gate that reports
// them, queued and limit.
func (w Waited) LogValue() slog.Value {
	if w.Queued == 0 && w.Limit == 0 {
		return slog.GroupValue(slog.Duration("wait", w.Wait))
	}
	return slog.GroupValue(slog.Duration("wait", w.Wait), slog.Int("queued", w.Queued), slog.Int("limit", w.Limit))
}

// Level returns Debug: waiting is a gate doing its work.
func (Waited) Level() slog.Level { return slog.LevelDebug }
