package breaker

import "log/slog"

// LogValue returns the transition as a group: from, to, cause, the break
// served when set, at and, for a breaker in shadow mode, shadow.
func (t Transition) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String("from", t.From.String()),
		slog.String("to", t.To.String()),
		slog.String("cause", t.Cause.String()),
	)
	if t.Break > 0 {
		attrs = append(attrs, slog.Duration("break", t.Break))
	}
	attrs = append(attrs, slog.Time("at", t.At))
	if t.Shadow {
		attrs = append(attrs, slog.Bool("shadow", true))
	}
	return slog.GroupValue(attrs...)
}

// Level returns Warn for a transition to Open or Isolated (a trip, a failed
// probe or ramp, a manual isolation) and Info for every other (a probe, a
// recovery, a close), also in shadow mode: a shadow trip is what the breaker
// is being watched for.
func (t Transition) Level() slog.Level {
	if t.To == Open || t.To == Isolated {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// LogValue returns the refusal as a group: the state that refused, its
// retry_after hint, at and, for a breaker in shadow mode, shadow.
func (r Rejection) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs,
		slog.String("state", r.State.String()),
		slog.Duration("retry_after", r.RetryAfter),
		slog.Time("at", r.At),
	)
	if r.Shadow {
		attrs = append(attrs, slog.Bool("shadow", true))
	}
	return slog.GroupValue(attrs...)
}

// Level returns Warn for a refusal, and Info for a shadow breaker's would-be
// refusal, which let the attempt through.
func (r Rejection) Level() slog.Level {
	if r.Shadow {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}
