package pipelineotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/clock"
	pipelineotel "github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/standard"
)

// reads counts the clock readings of one successful call of p, after one
// call that warms it up.
func reads(t *testing.T, p interface {
	Execute(context.Context, pipeline.Func[int]) (int, error)
}) int64 {
	t.Helper()
	_, err := p.Execute(context.Background(), work)
	require.NoError(t, err)
	stop := clock.Count()
	_, err = p.Execute(context.Background(), work)
	n := stop()
	require.NoError(t, err)
	return n
}

// An observed successful call through the preset reads the clock four
// times: once as it enters, the reading handed to every stage inside (the
// two timeouts' deadlines, the breaker's admission, the hedge's start, the
// attempt's start); once as the attempt returns, which the hedge measures
// its copy by; once as the breaker records the attempt; once as the call
// ends. The bare preset reads it three times: as it enters, as the hedge
// measures, as the breaker records.
func TestAnObservedCallReadsTheClockFourTimes(t *testing.T) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: mp})
	require.NoError(t, err)
	observed, err := pipelineotel.NewStandard[int](tel, standard.Config{})
	require.NoError(t, err)
	bare, err := standard.New[int](standard.Config{})
	require.NoError(t, err)

	assert.EqualValues(t, 4, reads(t, observed), "an observed call")
	assert.EqualValues(t, 3, reads(t, bare), "a bare call")
}
