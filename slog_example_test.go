package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// LogEvents logs every event of a pipeline and its breaker, each at its own
// level: here, at Info, a trip shows and the attempts (Debug) do not. The
// handler drops the times so that the output is the same at every run.
func ExampleLogEvents() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "at" {
				return slog.Attr{}
			}
			return a
		},
	}))
	hook := pipeline.LogEvents(logger)
	brk, err := breaker.New(breaker.Config{Name: "payments", ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, OnEvent: hook})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(breaker.Guard[string](brk)).With(pipeline.Options[string]{Name: "payments", OnEvent: hook})
	_, _ = p.Execute(context.Background(), func(context.Context) (string, error) {
		return "", errors.New("connection refused")
	})
	// Output:
	// level=WARN msg=breaker.transition pipeline="" stage=breaker name=payments event.from=closed event.to=open event.cause="consecutive failures" event.break=15s
}
