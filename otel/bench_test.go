package pipelineotel_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/standard"
)

// executor is what the benchmarks run: a standard pipeline, bare or with
// telemetry.
type executor interface {
	Execute(context.Context, pipeline.Func[int]) (int, error)
}

// presets returns the standard preset with every default, bare and with the
// metrics attached: an SDK meter provider whose reader is never collected,
// and no tracer.
func presets(b *testing.B) (bare, instrumented executor) {
	p, err := standard.New[int](standard.Config{})
	if err != nil {
		b.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	q, err := pipelineotel.NewStandard[int](tel, standard.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return p, q
}

func work(context.Context) (int, error) { return 1, nil }

// recordsFloor is the bare preset followed by what the SDK spends on a
// call's measurements and nothing else: a Record in each of two histograms
// (a call's duration and its attempt's, as this package records on the
// success path), each with a precomputed set of two attributes, as ours
// are, and a constant value, so that no clock is read. No telemetry of
// these instruments can cost less.
func recordsFloor(b *testing.B, bare executor) executor {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	meter := mp.Meter("floor")
	var hists [2]metric.Float64Histogram
	var sets [2][]metric.RecordOption
	for i, name := range []string{pipelineotel.MetricCallDuration, pipelineotel.MetricAttemptDuration} {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"))
		if err != nil {
			b.Fatal(err)
		}
		hists[i] = h
		set := attribute.NewSet(pipelineotel.AttrPipeline.String("floor"), attribute.String("second", "ok"))
		sets[i] = []metric.RecordOption{metric.WithAttributeSet(set)}
	}
	return floorExecutor{bare: bare, hists: hists, sets: sets}
}

type floorExecutor struct {
	bare  executor
	hists [2]metric.Float64Histogram
	sets  [2][]metric.RecordOption
}

func (f floorExecutor) Execute(ctx context.Context, fn pipeline.Func[int]) (int, error) {
	v, err := f.bare.Execute(ctx, fn)
	f.record(ctx)
	return v, err
}

// record is the floor's two Records.
func (f floorExecutor) record(ctx context.Context) {
	f.hists[1].Record(ctx, 0.001, f.sets[1]...)
	f.hists[0].Record(ctx, 0.001, f.sets[0]...)
}

// BenchmarkStandard runs the success path of the standard preset, bare and
// with the metrics attached, in one run:
//
//	cd otel && go test -run '^$' -bench Standard -benchmem -count 8
//
// Standard/bare and Standard/otel report the time and allocations of a call
// of each. Standard/interleaved runs, in turns of 256 calls so that the load
// of a shared machine falls on all alike, the bare preset; the preset with a
// hook that does nothing (what the pipeline itself spends on events for any
// hook); the preset with this package on a no-op meter provider (this
// package's own code); the floor (see recordsFloor); and the preset with the
// metrics attached. It reports the CPU time of a call of each, read from the
// benchmark's own thread (on Linux; wall time elsewhere) so that other
// processes on the machine do not count, and the ratio of the last to the
// first, in CPU time and in wall time, and the floor's ratio in CPU time.
func BenchmarkStandard(b *testing.B) {
	run := func(b *testing.B, p executor) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if _, err := p.Execute(ctx, work); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) {
		bare, _ := presets(b)
		run(b, bare)
	})
	b.Run("otel", func(b *testing.B) {
		_, instrumented := presets(b)
		run(b, instrumented)
	})
	b.Run("interleaved", func(b *testing.B) {
		bare, instrumented := presets(b)
		nop, err := pipelineotel.New(pipelineotel.Config{MeterProvider: noop.NewMeterProvider()})
		if err != nil {
			b.Fatal(err)
		}
		onNoop, err := pipelineotel.NewStandard[int](nop, standard.Config{})
		if err != nil {
			b.Fatal(err)
		}
		anyHook := bare.(*standard.Pipeline[int]).With(pipeline.Options[int]{
			OnEvent: func(context.Context, pipeline.Source, pipeline.Event) {},
		})
		variants := []executor{bare, anyHook, onNoop, recordsFloor(b, bare), instrumented}
		units := []string{"bare", "anyhook", "noopsdk", "floor", "otel"}
		ctx := context.Background()
		calls := make([]func(), len(variants))
		for i, p := range variants {
			calls[i] = func() {
				if _, err := p.Execute(ctx, work); err != nil {
					b.Fatal(err)
				}
			}
		}
		interleave(b, units, calls)
	})
}

// interleave runs each of calls in turns of 256, in one loop, so that a slow
// spell of a shared machine falls on all alike, and reports the CPU time of
// one call of each (<unit>-ns/call), read from the benchmark's own thread
// (on Linux; wall time elsewhere) so that other processes do not count; the
// ratio of the last to the first in CPU time (cpu-ratio) and in wall time
// (wall-ratio); and that of the one before last, the floor, to the first
// (floor-cpu-ratio).
func interleave(b *testing.B, units []string, calls []func()) {
	const turn = 256
	cpu := make([]time.Duration, len(calls))
	wall := make([]time.Duration, len(calls))
	n := 0
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for i, call := range calls {
			start, startCPU := time.Now(), threadCPU()
			for range turn {
				call()
			}
			cpu[i] += threadCPU() - startCPU
			wall[i] += time.Since(start)
		}
		n += turn
	}
	for i, unit := range units {
		b.ReportMetric(float64(cpu[i])/float64(n), unit+"-ns/call")
	}
	last := len(calls) - 1
	b.ReportMetric(float64(cpu[last])/float64(cpu[0]), "cpu-ratio")
	b.ReportMetric(float64(cpu[last-1])/float64(cpu[0]), "floor-cpu-ratio")
	b.ReportMetric(float64(wall[last])/float64(wall[0]), "wall-ratio")
}

// BenchmarkScopes runs the success path of one key of per-key scopes, bare
// and with the metrics attached by NewScopes, through the pipeline Get
// returns (which the Calls stage now measures):
//
//	cd otel && go test -run '^$' -bench Scopes -benchmem -count 8
func BenchmarkScopes(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	bare, err := standard.NewScopes(standard.ScopesConfig[string, int]{})
	if err != nil {
		b.Fatal(err)
	}
	instrumented, err := pipelineotel.NewScopes(tel, standard.ScopesConfig[string, int]{})
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		get  func(string) (*standard.Pipeline[int], error)
	}{{"bare", bare.Get}, {"otel", instrumented.Get}} {
		get := v.get
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				p, err := get("api.example.com:443")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Execute(ctx, work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
