package pipelinegrpc_test

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/standard"
)

// TestConfigRefusesNamingEveryField gives one impossible value per field and
// expects every one named in the one error.
func TestConfigRefusesNamingEveryField(t *testing.T) {
	_, err := pipelinegrpc.New(pipelinegrpc.Config{
		Standard:  standard.Config{Name: "x", Clock: clockwork.NewFakeClock(), Timeout: -time.Second},
		Methods:   map[string]pipelinegrpc.Method{"pkg.S/M": {}, "/pkg.S/M/N": {}, "/pkg.S/": {}, "/pkg.S/M": {}},
		Codes:     map[codes.Code]outcome.Kind{codes.OK: outcome.Transient, codes.Code(99): outcome.Permanent, codes.Aborted: outcome.Kind(7)},
		MaxScopes: -1,
		IdleAfter: -time.Second,
		Observer:  (*observer)(nil),
	})
	require.Error(t, err)
	for _, want := range []string{
		"Config.Observer is a nil *pipelinegrpc_test.observer: pass nil for none",
		"Config.MaxScopes must not be negative",
		"Config.IdleAfter must not be negative",
		"Config.Standard.Name must be empty",
		"Config.Standard.Clock must be nil",
		`Methods: "pkg.S/M" is neither`,
		`Methods: "/pkg.S/M/N" is neither`,
		"Codes: codes.OK cannot be reclassified",
		"Codes: Code(99) is not a gRPC status code",
		"Codes[Aborted]: outcome.Kind(7) is not a kind",
		"pipelinegrpc: Config.Standard: standard: Config.Timeout must not be negative",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), `"/pkg.S/"`, "a service's prefix is valid")
	assert.NoError(t, pipelinegrpc.Config{}.Validate(), "the zero Config")
}

// observer is an Observer of no use but its type.
type observer struct{ health.Observer }

// TestAScopeThatCannotBeBuiltFailsItsCalls has For return an impossible
// configuration: the call is not sent and fails with Internal, naming For
// and the key.
func TestAScopeThatCannotBeBuiltFailsItsCalls(t *testing.T) {
	svc := &service{}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
		cfg.For = func(_ pipelinegrpc.Key, shared standard.Config) standard.Config {
			shared.AttemptTimeout = time.Hour
			return shared
		}
	})
	_, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(within(t), request("x"))
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), "Config.For(passthrough:///a)")
	assert.Contains(t, err.Error(), "AttemptTimeout must be shorter")
	assert.Zero(t, svc.Calls(unaryMethod))
}
