package pipeline

import "context"

// Hooks returns one event hook that hands every event to each of hooks in
// turn, in the order given, so that a pipeline or a breaker can feed a logger
// ([LogEvents]), a telemetry exporter and a hook of your own at once:
//
//	pipeline.Options[T]{OnEvent: pipeline.Hooks(pipeline.LogEvents(logger), tel.Hook(), mine)}
//
// Nil hooks are skipped. With no hook left it returns nil, so a pipeline
// given the result still builds no events, and with one it returns that hook
// itself, so combining costs nothing. The hook it returns is safe for
// concurrent use if every one of hooks is. A panic of one hook reaches the
// caller, as it would without Hooks, and the hooks after it do not see that
// event.
func Hooks(hooks ...func(context.Context, Source, Event)) func(context.Context, Source, Event) {
	var set []func(context.Context, Source, Event)
	for _, h := range hooks {
		if h != nil {
			set = append(set, h)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return func(ctx context.Context, src Source, e Event) {
		for _, h := range set {
			h(ctx, src, e)
		}
	}
}
