package pipelinehttp

import (
	"net/http"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/carry"
)

// The request headers that carry a call's criticality from a [Transport] to
// the server it calls, where package shed reads them into the request's
// context (shed.Config.Criticality, shed.Criticality).
const (
	// CriticalityHeader carries the level of the call (criticality.Level's
	// String: "sheddable", "default" or "critical"). A call whose context has
	// no level (criticality.Marked is false) sends none, so that the server
	// serves it at the level it gives unmarked requests.
	CriticalityHeader = "Resilience-Criticality"
	// TenantHeader carries the tenant of the call (criticality.Tenant), at
	// most criticality.MaxTenant bytes of printable ASCII. A call without a
	// tenant, or whose tenant has any other byte, sends none.
	TenantHeader = "Resilience-Tenant"
)

// criticalityHeader returns the header map the attempts of req send, or nil
// to send the caller's own: a copy of req's with CriticalityHeader and
// TenantHeader added from req's context, each only if the context has what
// it carries and the caller has not set that header itself (the caller's
// wins, even empty). The caller's map is never modified.
func criticalityHeader(req *http.Request) http.Header {
	ctx := req.Context()
	l, marked := criticality.Marked(ctx)
	tenant := criticality.Tenant(ctx)
	level := marked && !present(req.Header, CriticalityHeader)
	who := tenant != "" && carry.Printable(tenant) && !present(req.Header, TenantHeader)
	if !level && !who {
		return nil
	}
	h := req.Header.Clone()
	if h == nil {
		h = make(http.Header, 2)
	}
	if level {
		h[CriticalityHeader] = []string{l.String()}
	}
	if who {
		h[TenantHeader] = []string{tenant}
	}
	return h
}

// present reports whether h has the header key (canonical), even with no
// value.
func present(h http.Header, key string) bool {
	_, ok := h[key]
	return ok
}
