package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/resilience-go/pipeline"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/health"
	pipelineotel "github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// healthService is the gRPC health service, every method of which may be
// sent twice: Check and Watch only read.
const healthService = "/grpc.health.v1.Health/"

// dependencies are the service's two upstreams, each called through the
// library: an http.Client on a pipelinehttp transport (a pipeline per host)
// and a gRPC channel with pipelinegrpc's interceptors (a pipeline per
// target). Both report to one Telemetry, the one field Observer each, and
// log their events with slog; the health view lists the state of both.
type dependencies struct {
	upstream string // the URL the service GETs
	http     *http.Client
	base     *http.Transport // under the transport: its idle connections are ours to close
	conn     *grpc.ClientConn
	checks   healthpb.HealthClient
	view     health.Registry // every host of the transport, every target of the client
}

// newDependencies builds the clients of upstream (an HTTP URL) and target (a
// gRPC target), reporting to tel and logging to logger. Nothing is sent
// until the first call.
func newDependencies(tel *pipelineotel.Telemetry, logger *slog.Logger, upstream, target string) (*dependencies, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	transport, err := pipelinehttp.New(pipelinehttp.Config{
		Base:     base,
		Observer: tel,
		OnEvent:  pipeline.LogEvents(logger),
	})
	if err != nil {
		return nil, err
	}
	client, err := pipelinegrpc.New(pipelinegrpc.Config{
		Methods:  map[string]pipelinegrpc.Method{healthService: {Idempotent: true}},
		Observer: tel,
		OnEvent:  pipeline.LogEvents(logger),
	})
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(target, append(client.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		return nil, fmt.Errorf("the gRPC channel to %q: %w", target, err)
	}
	d := &dependencies{
		upstream: upstream,
		http:     &http.Client{Transport: transport},
		base:     base,
		conn:     conn,
		checks:   healthpb.NewHealthClient(conn),
	}
	d.view.Add(transport.Health())
	d.view.Add(client.Health())
	return d, nil
}

// close closes the gRPC channel and the HTTP connections left idle. Calls
// still running fail; run closes the dependencies after its server has
// finished the last request.
func (d *dependencies) close() error {
	d.base.CloseIdleConnections()
	return d.conn.Close()
}
