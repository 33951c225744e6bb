package pipelinegrpc_test

// An RPC's criticality level and tenant, carried by the client's
// interceptors to real gRPC servers (over in-memory connections), read by a
// Shedder or by the Criticality interceptors alone, and on through a
// second hop.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// markOf says what ctx holds of a call's criticality: its level (as From
// reads it), whether it was set, and its tenant.
func markOf(ctx context.Context) string {
	_, ok := criticality.Marked(ctx)
	return fmt.Sprintf("%v %v %q", criticality.From(ctx), ok, criticality.Tenant(ctx))
}

// marking is a service whose unary and server-stream handlers answer the
// mark of their context.
func marking() *service {
	return &service{
		unary: func(ctx context.Context, _ int, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			return &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: []byte(markOf(ctx))}}, nil
		},
		stream: func(_ int, _ *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
			return ss.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: []byte(markOf(ss.Context()))}})
		},
	}
}

// marked is the context of an RPC at level l for tenant (none for "").
func marked(ctx context.Context, l criticality.Level, tenant string) context.Context {
	return criticality.WithTenant(criticality.With(ctx, l), tenant)
}

// unaryMark makes a unary call with ctx and returns the mark its handler
// answered.
func unaryMark(ctx context.Context, c testgrpc.TestServiceClient) (string, error) {
	resp, err := c.UnaryCall(ctx, request(""))
	return string(resp.GetPayload().GetBody()), err
}

// streamMark opens a server stream with ctx and returns the mark its
// handler answered.
func streamMark(ctx context.Context, c testgrpc.TestServiceClient) (string, error) {
	stream, err := c.StreamingOutputCall(ctx, streamRequest(""))
	if err != nil {
		return "", err
	}
	got, err := receive(stream)
	return strings.Join(got, "|"), err
}

// shedding returns the options of a Shedder with a bulkhead of 64 and cfg's
// other settings.
func shedding(t *testing.T, cfg pipelinegrpc.ShedConfig) []grpc.ServerOption {
	t.Helper()
	cfg.Limits = []pipeline.Described{newBulkhead(t, 64)}
	return newShedder(t, cfg).ServerOptions()
}

var levels = []criticality.Level{criticality.Sheddable, criticality.Default, criticality.Critical}

func TestTheKeysAreTheHeadersInLowercase(t *testing.T) {
	assert.Equal(t, strings.ToLower(pipelinehttp.CriticalityHeader), pipelinegrpc.CriticalityKey)
	assert.Equal(t, strings.ToLower(pipelinehttp.TenantHeader), pipelinegrpc.TenantKey)
}

// The level and tenant of unary calls and server streams, sent more than
// once or once, reach the handler behind a Shedder; an unmarked RPC is
// served as Default, unmarked.
func TestTheLevelAndTenantReachTheServer(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{})...)
	idem := srv.dial(t, "idempotent", newClient(t, nil).DialOptions()...)
	once := srv.dial(t, "once", newClient(t, nil, func(c *pipelinegrpc.Config) { c.Methods = nil }).DialOptions()...)
	ctx := within(t)
	for name, c := range map[string]testgrpc.TestServiceClient{"idempotent": idem, "sent once": once} {
		for _, l := range levels {
			want := fmt.Sprintf("%v true \"acme\"", l)
			got, err := unaryMark(marked(ctx, l, "acme"), c)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%s unary", name)
			got, err = streamMark(marked(ctx, l, "acme"), c)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%s stream", name)
		}
		got, err := unaryMark(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, `default false ""`, got, "%s unmarked unary", name)
		got, err = streamMark(criticality.WithTenant(ctx, "acme"), c)
		require.NoError(t, err)
		assert.Equal(t, `default false "acme"`, got, "%s stream with a tenant, no level", name)
	}
}

// A tenant is sent within its bound and only as printable ASCII, which is
// all gRPC metadata may carry: any other tenant is left out, and the RPC
// goes all the same.
func TestATenantGoesAsPrintableASCIIWithinItsBound(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{})...)
	c := srv.dial(t, "tenants", newClient(t, nil).DialOptions()...)
	long := strings.Repeat("t", 3*criticality.MaxTenant)
	got, err := unaryMark(marked(within(t), criticality.Critical, long), c)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("critical true %q", long[:criticality.MaxTenant]), got)
	for _, bad := range []string{"café", "a\nb", "\x7f"} {
		got, err := unaryMark(marked(within(t), criticality.Critical, bad), c)
		require.NoError(t, err, "%q", bad)
		assert.Equal(t, `critical true ""`, got, "%q is not sent", bad)
	}
}

// Metadata the caller set itself is sent as it is.
func TestTheCallersOwnMetadataWins(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{})...)
	c := srv.dial(t, "own", newClient(t, nil).DialOptions()...)
	ctx := marked(within(t), criticality.Critical, "acme")
	ctx = metadata.AppendToOutgoingContext(ctx, pipelinegrpc.CriticalityKey, "sheddable", pipelinegrpc.TenantKey, "globex")
	got, err := unaryMark(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, `sheddable true "globex"`, got)
}

func TestPropagateCriticalityNamesTheTargets(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{})...)
	var asked atomic.Int32
	cl := newClient(t, nil, func(c *pipelinegrpc.Config) {
		c.PropagateCriticality = func(target string) bool {
			asked.Add(1)
			return target == "passthrough:///ours"
		}
	})
	ctx := marked(within(t), criticality.Critical, "acme")
	got, err := unaryMark(ctx, srv.dial(t, "theirs", cl.DialOptions()...))
	require.NoError(t, err)
	assert.Equal(t, `default false ""`, got)
	got, err = unaryMark(ctx, srv.dial(t, "ours", cl.DialOptions()...))
	require.NoError(t, err)
	assert.Equal(t, `critical true "acme"`, got)
	assert.EqualValues(t, 2, asked.Load())
}

// meshOnly trusts the level a peer of the mesh claims and caps everyone
// else's at Default. Metadata stands in for the peer's verified identity.
func meshOnly(ctx context.Context, method string, claimed criticality.Level, ok bool) criticality.Level {
	if len(metadata.ValueFromIncomingContext(ctx, "mesh-peer")) > 0 {
		return claimed
	}
	return min(claimed, criticality.Default)
}

func TestAShedderCapsWhatItsCallersClaim(t *testing.T) {
	var methods sync.Map
	decide := func(ctx context.Context, method string, claimed criticality.Level, ok bool) criticality.Level {
		methods.Store(method, true)
		return meshOnly(ctx, method, claimed, ok)
	}
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{Criticality: decide})...)
	c := srv.dial(t, "capped", newClient(t, nil).DialOptions()...)
	ctx := marked(within(t), criticality.Critical, "acme")

	got, err := unaryMark(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, `default true "acme"`, got, "an outsider's critical is served as default")
	got, err = streamMark(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, `default true "acme"`, got, "on a stream too")
	got, err = unaryMark(criticality.With(within(t), criticality.Sheddable), c)
	require.NoError(t, err)
	assert.Equal(t, `sheddable true ""`, got, "the cap only lowers")

	got, err = unaryMark(metadata.AppendToOutgoingContext(ctx, "mesh-peer", "orders"), c)
	require.NoError(t, err)
	assert.Equal(t, `critical true "acme"`, got, "a peer's critical is trusted")
	got, err = unaryMark(within(t), c)
	require.NoError(t, err)
	assert.Equal(t, `default false ""`, got, "an unmarked RPC stays unmarked")

	_, unary := methods.Load(unaryMethod)
	_, stream := methods.Load(streamMethod)
	assert.True(t, unary && stream, "decide is told the method")
}

// Metadata that is not a level, from a plain gRPC client, is no level;
// values are bounded, and the first of many is read.
func TestBadMetadataIsNoLevel(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{})...)
	c := srv.dial(t, "plain")
	for _, tc := range []struct {
		name string
		kv   []string
		want string
	}{
		{"garbage", []string{pipelinegrpc.CriticalityKey, "urgent!!"}, `default false ""`},
		{"a level that does not exist", []string{pipelinegrpc.CriticalityKey, "level(9)"}, `default false ""`},
		{"huge", []string{pipelinegrpc.CriticalityKey, strings.Repeat("critical", 8<<10), pipelinegrpc.TenantKey, strings.Repeat("t", 8<<10)}, fmt.Sprintf("default false %q", strings.Repeat("t", criticality.MaxTenant))},
		{"capitals", []string{pipelinegrpc.CriticalityKey, "CRITICAL"}, `critical true ""`},
		{"a list, the first", []string{pipelinegrpc.CriticalityKey, "sheddable, critical"}, `sheddable true ""`},
		{"two values, the first", []string{pipelinegrpc.CriticalityKey, "critical", pipelinegrpc.CriticalityKey, "sheddable", pipelinegrpc.TenantKey, "a", pipelinegrpc.TenantKey, "b"}, `critical true "a"`},
		{"empty", []string{pipelinegrpc.CriticalityKey, "", pipelinegrpc.TenantKey, ""}, `default false ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := unaryMark(metadata.AppendToOutgoingContext(within(t), tc.kv...), c)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// An exempt method sees the level too: no limit runs, but the handler reads
// it.
func TestAnExemptMethodSeesTheLevel(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{Exempt: func(string) bool { return true }})...)
	c := srv.dial(t, "exempt", newClient(t, nil).DialOptions()...)
	got, err := unaryMark(marked(within(t), criticality.Sheddable, "acme"), c)
	require.NoError(t, err)
	assert.Equal(t, `sheddable true "acme"`, got)
	got, err = streamMark(marked(within(t), criticality.Sheddable, "acme"), c)
	require.NoError(t, err)
	assert.Equal(t, `sheddable true "acme"`, got)
}

// An interceptor of the server's own, chained before, that sets the level
// or tenant wins over what the caller claims.
func TestTheServersOwnMarksWin(t *testing.T) {
	own := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(criticality.WithTenant(ctx, "from-the-certificate"), req)
	}
	unary, stream := pipelinegrpc.Criticality(nil)
	srv := serve(t, marking(), grpc.ChainUnaryInterceptor(own, unary), grpc.ChainStreamInterceptor(stream))
	c := srv.dial(t, "own", newClient(t, nil).DialOptions()...)
	got, err := unaryMark(marked(within(t), criticality.Critical, "acme"), c)
	require.NoError(t, err)
	assert.Equal(t, `critical true "from-the-certificate"`, got)
}

// Client -> client interceptors -> server A (a Shedder capping outsiders at
// Default) -> client interceptors -> server B (the Criticality
// interceptors alone): B's handler sees the level A served the RPC at.
func TestTheLevelCrossesTwoHopsOverGRPC(t *testing.T) {
	unary, stream := pipelinegrpc.Criticality(nil)
	b := serve(t, marking(), grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream))
	toB := b.dial(t, "b", newClient(t, nil).DialOptions()...)
	a := serve(t, &service{
		unary: func(ctx context.Context, _ int, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			return toB.UnaryCall(ctx, request("")) // the incoming context, as a handler passes it on
		},
	}, shedding(t, pipelinegrpc.ShedConfig{Criticality: meshOnly})...)
	toA := a.dial(t, "a", newClient(t, nil).DialOptions()...)

	ctx := marked(within(t), criticality.Critical, "acme")
	got, err := unaryMark(metadata.AppendToOutgoingContext(ctx, "mesh-peer", "orders"), toA)
	require.NoError(t, err)
	assert.Equal(t, `critical true "acme"`, got, "a peer's level goes on")
	got, err = unaryMark(ctx, toA)
	require.NoError(t, err)
	assert.Equal(t, `default true "acme"`, got, "an outsider's, capped, goes on as A serves it")
	got, err = unaryMark(within(t), toA)
	require.NoError(t, err)
	assert.Equal(t, `default false ""`, got, "an unmarked RPC stays unmarked")
}

// Many RPCs at once, each with a level and tenant of its own: each arrives
// with its own.
func TestManyRPCsAtOnceKeepTheirLevels(t *testing.T) {
	srv := serve(t, marking(), shedding(t, pipelinegrpc.ShedConfig{})...)
	c := srv.dial(t, "many", newClient(t, nil).DialOptions()...)
	ctx := within(t)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 8 {
				l := levels[(g+i)%len(levels)]
				tenant := fmt.Sprintf("t%d.%d", g, i)
				want := fmt.Sprintf("%v true %q", l, tenant)
				rpc := unaryMark
				if i%2 == 1 {
					rpc = streamMark
				}
				got, err := rpc(marked(ctx, l, tenant), c)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, want, got)
			}
		})
	}
	wg.Wait()
}
