package shed

import (
	"context"
	"net/http"
	"strings"

	"github.com/resilience-go/pipeline/criticality"
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
		claimed, ok := parseLevel(first(r.Header[pipelinehttp.CriticalityHeader]))
		l := claimed
		if decide != nil {
			l = decide(r, claimed, ok)
		}
		if l.Valid() {
			ctx = criticality.With(ctx, l)
		}
	}
	if criticality.Tenant(ctx) == "" {
		if t := tenant(first(r.Header[pipelinehttp.TenantHeader])); t != "" {
			ctx = criticality.WithTenant(ctx, t)
		}
	}
	return ctx
}

// first is the first of a header's values, or "" for none.
func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// parseLevel reads a level header's value: the first element of a list
// (the header sent twice and joined by a proxy), spaces around it ignored.
// Anything but a level's name is no level.
func parseLevel(v string) (criticality.Level, bool) {
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return criticality.Parse(strings.TrimSpace(v))
}

// tenant reads a tenant header's value: its first criticality.MaxTenant
// bytes, if they are printable ASCII; "" (no tenant) otherwise.
func tenant(v string) string {
	v = v[:min(len(v), criticality.MaxTenant)]
	for i := range len(v) {
		if v[i] < ' ' || v[i] > '~' {
			return ""
		}
	}
	return v
}
