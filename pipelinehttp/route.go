package pipelinehttp

import "context"

// Route returns a copy of ctx that sends the request it is given to through
// a scope of its own within its host: the scope named name, with a breaker,
// retry budget and latency estimator apart from the host's shared ones
// (Host.Route is name). Give a route to the requests of an endpoint whose
// latency differs from the rest of its host's by more than the breaker's
// slow-call multiple (3 by default): a report that takes seconds on a host
// that otherwise answers in milliseconds. Under one breaker the measured
// normal latency is that of whichever requests are the most, so a shift of
// the mix towards the slow endpoint reads as a slowdown and can open the
// breaker of a healthy host.
//
// Routes count against Config.MaxHosts: name them in code ("reports"),
// never after a request's path or a user's input. PerHost is called for
// each route's state with its Host, Route set, so a route can have settings
// of its own; a PerHost that compares hosts should clear Route first
// (h.Route = "") to give a route its host's settings.
// An empty name is the host's shared scope: it undoes a Route on the same
// context. Route keeps any mark of Replayable or SendOnce, and they keep it.
func Route(ctx context.Context, name string) context.Context {
	return mark(ctx, func(m *marks) { m.route = name })
}
