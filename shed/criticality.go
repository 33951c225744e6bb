package shed

import (
	"context"
	"net/http"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/carry"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// Criticality returns a handler that serves each request with next, its
// context carrying the criticality level and tenant its caller sent, as a
// [Handler] reads them before its limits run (see Config.Criticality, which
// decide is): for a server, or a part of one, that runs no limit but should
// know, and pass on, how much each request matters. The handler calls
// criticality.From(r.Context()) and criticality.Tenant(r.Context()), and a
// pipelinehttp.Transport given that context sends both on. It panics if
// next is nil.
func Criticality(next http.Handler, decide func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level) http.Handler {
	if next == nil {
		panic("shed: Criticality: the next handler is nil")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ctx := claim(r, decide); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// claim returns r's context with the level and tenant r's caller sent
// (pipelinehttp.CriticalityHeader and TenantHeader) added, the level as
// decide has it (nil trusts the header), or r's own context if nothing is
// added. A level or a tenant the context has already (set by the server's
// own middleware, outside) is kept, and decide is not asked.
func claim(r *http.Request, decide func(*http.Request, criticality.Level, bool) criticality.Level) context.Context {
	ctx := r.Context()
	if _, ok := criticality.Marked(ctx); !ok {
		claimed, ok := carry.Level(r.Header[pipelinehttp.CriticalityHeader])
		l := claimed
		if decide != nil {
			l = decide(r, claimed, ok)
		}
		if l.Valid() {
			ctx = criticality.With(ctx, l)
		}
	}
	if criticality.Tenant(ctx) == "" {
		if t := carry.Tenant(r.Header[pipelinehttp.TenantHeader]); t != "" {
			ctx = criticality.WithTenant(ctx, t)
		}
	}
	return ctx
}
