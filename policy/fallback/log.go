package fallback

import (
	"log/slog"

	"github.com/resilience-go/pipeline/internal/logattr"
)

// LogValue returns the fallback as a group: the replaced result's verdict
// (its kind, with retry_after, self_imposed and canceled when set) and err,
// and func_err when the fallback failed too.
func (e Executed) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 6)
	attrs = logattr.Verdict(attrs, e.Verdict)
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	if e.FuncErr != nil {
		attrs = append(attrs, slog.String("func_err", e.FuncErr.Error()))
	}
	return slog.GroupValue(attrs...)
}

// Level returns Info when the result was replaced (the stage doing its work,
// but the caller no longer sees the error, so the log must), and Warn when
// the fallback failed too.
func (e Executed) Level() slog.Level {
	if e.FuncErr != nil {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}
