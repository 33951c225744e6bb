package pipelinegrpc_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/resilience-go/pipeline"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// catalog answers UnaryCall with the request's payload; every other method
// is unimplemented.
type catalog struct {
	testgrpc.UnimplementedTestServiceServer
}

func (catalog) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Payload: req.GetPayload()}, nil
}

// Example puts a Shedder, with a bulkhead of 64 slots, on a server and a Client on the channel that calls
// it, over an in-memory connection: UnaryCall is declared idempotent (it is
// retried after a Transient failure and hedged when slow); EmptyCall is not,
// and its Unimplemented, a Permanent code, comes back at once.
func Example() {
	slots, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 64})
	if err != nil {
		log.Fatal(err)
	}
	shed, err := pipelinegrpc.NewShedder(pipelinegrpc.ShedConfig{Limits: []pipeline.Described{slots}})
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(shed.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(srv, catalog{})
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	c, err := pipelinegrpc.New(pipelinegrpc.Config{
		Methods: map[string]pipelinegrpc.Method{
			"/grpc.testing.TestService/UnaryCall": {Idempotent: true},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient("passthrough:///catalog", append(c.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
	)...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := testgrpc.NewTestServiceClient(conn)

	ctx := context.Background()
	resp, err := client.UnaryCall(ctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("hello")}})
	fmt.Println(string(resp.GetPayload().GetBody()), err)
	_, err = client.EmptyCall(ctx, &testgrpc.Empty{})
	fmt.Println(status.Code(err))
	for key, snap := range c.Breakers {
		fmt.Println(key, snap.State)
	}
	// Output:
	// hello <nil>
	// Unimplemented
	// passthrough:///catalog closed
}
