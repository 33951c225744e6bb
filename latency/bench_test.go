package latency

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchDurations are latencies spread over 1 ms .. 200 ms, so that the bucket
// computation sees varied input.
var benchDurations = func() (ds [1024]time.Duration) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ds {
		ds[i] = time.Millisecond + time.Duration(r.Int64N(int64(199*time.Millisecond)))
	}
	return ds
}()

// BenchmarkEstimatorRecordQuantile is one Record and one Quantile on the
// default estimator on real time, sharing one clock reading, as an attempt
// followed by the next hedge-delay read does.
func BenchmarkEstimatorRecordQuantile(b *testing.B) {
	e, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var sink time.Duration
	for i := 0; b.Loop(); i++ {
		now := e.Now()
		e.Record(now, benchDurations[i%len(benchDurations)])
		d, _ := e.Quantile(now, 0.95)
		sink += d
	}
	_ = sink
}

// BenchmarkEstimatorRecordQuantileParallel is the same from every P at once on
// one shared estimator.
func BenchmarkEstimatorRecordQuantileParallel(b *testing.B) {
	e, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var sink time.Duration
		for i := 0; pb.Next(); i++ {
			now := e.Now()
			e.Record(now, benchDurations[i%len(benchDurations)])
			d, _ := e.Quantile(now, 0.95)
			sink += d
		}
		_ = sink
	})
}
