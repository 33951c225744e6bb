package observe_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/standard"
)

// A gRPC client given a Telemetry as its Observer reports every target it
// calls: the RPCs under the family "grpc", the target's breaker and budget
// under its scope's name (Key.String, the channel's target); its OnEvent
// logs the target's breaker transitions; its Health lists the target.
func TestGRPCClientReportsEveryTargetThroughOneField(t *testing.T) {
	m := newMeter(t)
	logs, logger := newLogs()
	srv := newFlakyGRPC(t)
	c, err := pipelinegrpc.New(pipelinegrpc.Config{
		Standard: standard.Config{Retry: fastRetries},
		Methods:  map[string]pipelinegrpc.Method{"/grpc.health.v1.Health/": {Idempotent: true}},
		Observer: m.tel,
		OnEvent:  pipeline.LogEvents(logger),
	})
	require.NoError(t, err)
	conn, err := grpc.NewClient(srv.addr, append(c.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := healthpb.NewHealthClient(conn)
	v := views{meter: m, logs: logs, health: serveHealth(t, c.Health()), name: pipelinegrpc.Key{Target: conn.Target()}.String(), family: "grpc"}

	// A healthy target.
	const healthy = 5
	for range healthy {
		resp, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	}
	v.expectClosed(t, healthy)

	// A storm: every RPC fails with Unavailable, until the target's breaker
	// opens and refuses the rest at once, with Unavailable too.
	srv.fail()
	var refused uint64
	for range storm {
		_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
		require.Error(t, err)
		assert.Equal(t, codes.Unavailable, status.Code(err))
		if errors.Is(err, pipeline.DependencyUnavailable) {
			refused++
		}
	}
	require.Positive(t, refused, "the breaker refused none of %d RPCs", storm)
	v.expectOpen(t, healthy+storm, refused)
}

// flakyGRPC is a gRPC health service on a loopback listener that answers
// SERVING until fail is called, and Unavailable to every RPC after that.
type flakyGRPC struct {
	healthpb.UnimplementedHealthServer
	addr    string
	failing atomic.Bool
}

func newFlakyGRPC(t *testing.T) *flakyGRPC {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &flakyGRPC{addr: lis.Addr().String()}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, f)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return f
}

// fail makes every later RPC fail.
func (f *flakyGRPC) fail() { f.failing.Store(true) }

func (f *flakyGRPC) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if f.failing.Load() {
		return nil, status.Error(codes.Unavailable, "storm")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}
