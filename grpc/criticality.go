package pipelinegrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/carry"
)

// The metadata keys that carry an RPC's criticality from a [Client] to the
// server, where a [Shedder] (or the interceptors [Criticality] returns)
// reads them into the handler's context: the lowercase forms of
// pipelinehttp.CriticalityHeader and TenantHeader, as gRPC metadata keys
// must be.
const (
	// CriticalityKey carries the level of the RPC (criticality.Level's
	// String: "sheddable", "default" or "critical"). An RPC whose context
	// has no level (criticality.Marked is false) sends none, so that the
	// server serves it at the level it gives unmarked RPCs.
	CriticalityKey = "resilience-criticality"
	// TenantKey carries the tenant of the RPC (criticality.Tenant), at most
	// criticality.MaxTenant bytes of printable ASCII, as gRPC metadata
	// requires. An RPC without a tenant, or whose tenant has any other
	// byte, sends none.
	TenantKey = "resilience-tenant"
)

// carry returns ctx with its criticality level and tenant added to its
// outgoing metadata, each only if ctx has what it carries and the caller
// has not set that key itself (the caller's wins), or ctx itself if there
// is nothing to add or target is not told (Config.PropagateCriticality).
// Every attempt of the RPC derives its context from the one returned, so
// the metadata is added once per RPC.
func (c *Client) carry(ctx context.Context, target string) context.Context {
	l, marked := criticality.Marked(ctx)
	tenant := criticality.Tenant(ctx)
	if !marked && tenant == "" {
		return ctx
	}
	if f := c.cfg.PropagateCriticality; f != nil && !f(target) {
		return ctx
	}
	var kv [4]string
	n := 0
	if marked && metadata.ValueFromOutgoingContext(ctx, CriticalityKey) == nil {
		kv[0], kv[1] = CriticalityKey, l.String()
		n = 2
	}
	if tenant != "" && carry.Printable(tenant) && metadata.ValueFromOutgoingContext(ctx, TenantKey) == nil {
		kv[n], kv[n+1] = TenantKey, tenant
		n += 2
	}
	if n == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv[:n]...)
}

// Criticality returns a server interceptor pair, unary and stream, that
// only reads the criticality level and tenant each RPC's caller sent
// (CriticalityKey, TenantKey) into the handler's context, as a [Shedder]
// does before its limits run (see ShedConfig.Criticality, which decide
// is): for a server that runs no limit but should know, and pass on, how
// much each RPC matters. Chain them before the interceptors that read the
// level:
//
//	unary, stream := pipelinegrpc.Criticality(nil)
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream))
func Criticality(decide func(ctx context.Context, method string, claimed criticality.Level, ok bool) criticality.Level) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(claim(ctx, info.FullMethod, decide), req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if ctx := claim(ss.Context(), info.FullMethod, decide); ctx != ss.Context() {
			ss = &contextStream{ServerStream: ss, ctx: ctx}
		}
		return handler(srv, ss)
	}
	return unary, stream
}

// claim returns ctx, the context of an RPC to method, with the level and
// tenant its caller sent in its incoming metadata added, the level as
// decide has it (nil trusts the metadata), or ctx itself if nothing is
// added. A level or a tenant ctx has already (set by an interceptor of the
// server's own, chained before) is kept, and decide is not asked.
func claim(ctx context.Context, method string, decide func(context.Context, string, criticality.Level, bool) criticality.Level) context.Context {
	in := ctx
	if _, ok := criticality.Marked(in); !ok {
		claimed, ok := carry.Level(metadata.ValueFromIncomingContext(in, CriticalityKey))
		l := claimed
		if decide != nil {
			l = decide(in, method, claimed, ok)
		}
		if l.Valid() {
			ctx = criticality.With(ctx, l)
		}
	}
	if criticality.Tenant(ctx) == "" {
		if t := carry.Tenant(metadata.ValueFromIncomingContext(in, TenantKey)); t != "" {
			ctx = criticality.WithTenant(ctx, t)
		}
	}
	return ctx
}
