package simulation

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// arrivalTimes returns, for each process of c, the times of its calls as the
// run schedules them, after set (if not nil) has adjusted each process.
func arrivalTimes(t *testing.T, c Config, set func(p *process)) [][]time.Duration {
	t.Helper()
	s, err := newSim(c)
	require.NoError(t, err)
	times := make([][]time.Duration, len(s.procs))
	for i := range s.procs {
		p := &s.procs[i]
		if set != nil {
			set(p)
		}
		for {
			at, ok := p.pacer.next(&s.cfg, p.phase)
			if !ok {
				break
			}
			times[i] = append(times[i], at)
		}
	}
	return times
}

// withFrac places a process's even arrivals at the phase fraction frac.
func withFrac(frac float64, rate float64) func(p *process) {
	return func(p *process) {
		p.phase = evenPhase(frac, rate)
		p.pacer.frac = frac
	}
}

// gaps returns the mean of the gaps between times, in seconds, their
// coefficient of variation (standard deviation over mean), and the fraction
// of them longer than the mean.
func gaps(times []time.Duration) (mean, cv, longer float64) {
	n := float64(len(times) - 1)
	for i := 1; i < len(times); i++ {
		mean += (times[i] - times[i-1]).Seconds() / n
	}
	var sq float64
	for i := 1; i < len(times); i++ {
		g := (times[i] - times[i-1]).Seconds()
		sq += (g - mean) * (g - mean) / n
		if g > mean {
			longer += 1 / n
		}
	}
	return mean, math.Sqrt(sq) / mean, longer
}

func TestEvenArrivalsAreWhereTheyHaveAlwaysBeen(t *testing.T) {
	// The arrivals of a run without steps, computed as the run computed them
	// before it had Arrivals and Steps.
	for _, c := range []Config{
		{Seed: 1, Duration: 10 * time.Second, Rate: 100, Processes: 3},
		{Seed: 7, Duration: 90 * time.Second, Rate: 12.5, Processes: 2},
		{Seed: 3, Duration: 7 * time.Second, Rate: 3, Processes: 5},
		{Seed: 9, Duration: 2 * time.Second, Rate: 7.7},
		{Seed: 0, Duration: time.Second, Rate: 1000, Processes: 200},
		{Seed: 5, Duration: 1500 * time.Millisecond, Rate: 0.5},
	} {
		c.Dependency = Healthy{}
		period := time.Duration(float64(time.Second) / c.Rate)
		phases := rand.New(rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamPhase, 0)))
		want := make([][]time.Duration, c.processes())
		for i := range want {
			phase := time.Duration(phases.Float64() * float64(period))
			for k := 0; ; k++ {
				at := phase + time.Duration(float64(k)*float64(time.Second)/c.Rate)
				if at >= c.Duration {
					break
				}
				want[i] = append(want[i], at)
			}
		}
		assert.Equal(t, want, arrivalTimes(t, c, nil), "rate %v", c.Rate)
	}
}

func TestEvenArrivalsAreEvenlySpaced(t *testing.T) {
	times := arrivalTimes(t, Config{Seed: 1, Duration: 100 * time.Second, Rate: 200, Dependency: Healthy{}}, nil)[0]
	require.Len(t, times, 20_000)
	mean, cv, _ := gaps(times)
	assert.InDelta(t, 0.005, mean, 1e-9)
	assert.InDelta(t, 0, cv, 1e-6, "the gaps differ by a nanosecond of rounding at most")
}

func TestPoissonArrivalsAverageTheRateWithExponentialGaps(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		c := Config{Seed: seed, Duration: 100 * time.Second, Rate: 200, Arrivals: Poisson, Dependency: Healthy{}}
		times := arrivalTimes(t, c, nil)[0]
		assert.InEpsilon(t, 20_000, len(times), 0.03, "seed %d: about Rate x Duration calls", seed)
		assert.True(t, times[0] >= 0 && times[len(times)-1] < c.Duration, "seed %d: within the run", seed)
		assert.IsNonDecreasing(t, times)
		mean, cv, longer := gaps(times)
		assert.InEpsilon(t, 0.005, mean, 0.03, "seed %d: the mean gap is 1/Rate", seed)
		assert.InDelta(t, 1, cv, 0.05, "seed %d: an exponential's coefficient of variation is 1", seed)
		assert.InDelta(t, math.Exp(-1), longer, 0.02, "seed %d: P(gap > mean) = 1/e", seed)
	}
}

func TestStepsChangeTheOfferedRate(t *testing.T) {
	steps := []Step{{At: 5 * time.Second, Rate: 30}, {At: 10 * time.Second, Rate: 0}, {At: 15 * time.Second, Rate: 20}}
	r, err := Run(Config{Seed: 1, Duration: 20 * time.Second, Processes: 3, Rate: 10, Steps: steps, Dependency: Healthy{}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(r.Seconds), 20)
	for i, s := range r.Seconds {
		want := 0 // after the run, where its last calls end
		if i < 20 {
			want = 3 * []int{10, 30, 0, 20}[i/5]
		}
		assert.Equal(t, want, s.Offered, "second %d: even arrivals offer each stretch's rate exactly", i)
	}
	assert.Equal(t, 3*(50+150+0+100), r.Offered)
}

func TestStepsChangeThePoissonRate(t *testing.T) {
	steps := []Step{{At: 20 * time.Second, Rate: 200}, {At: 40 * time.Second, Rate: 0}, {At: 60 * time.Second, Rate: 100}}
	c := Config{Seed: 1, Duration: 80 * time.Second, Processes: 4, Rate: 50, Arrivals: Poisson, Steps: steps, Dependency: Healthy{}}
	r, err := Run(c)
	require.NoError(t, err)
	stretch := func(from, to int) (n int) {
		for _, s := range r.Seconds[from:to] {
			n += s.Offered
		}
		return n
	}
	assert.InEpsilon(t, 4*50*20, stretch(0, 20), 0.05)
	assert.InEpsilon(t, 4*200*20, stretch(20, 40), 0.05)
	assert.Zero(t, stretch(40, 60), "no calls at rate 0")
	assert.InEpsilon(t, 4*100*20, stretch(60, 80), 0.05)
	var n int
	for _, times := range arrivalTimes(t, c, nil) {
		n += len(times)
	}
	assert.Equal(t, r.Offered, n, "the run offers the calls arrivalTimes sees")
}

func TestStepBoundaries(t *testing.T) {
	ms := func(ms ...int) []time.Duration {
		d := make([]time.Duration, len(ms))
		for i, m := range ms {
			d[i] = time.Duration(m) * time.Millisecond
		}
		return d
	}
	for _, tc := range []struct {
		name  string
		rate  float64
		frac  float64
		steps []Step
		end   time.Duration
		want  []time.Duration
	}{
		{"between two calls the new spacing starts at the step", 1, 0, []Step{{2500 * time.Millisecond, 2}}, 4 * time.Second,
			ms(0, 1000, 2000, 2500, 3000, 3500)},
		{"a call at the step belongs to the new stretch, once", 1, 0, []Step{{2 * time.Second, 4}}, 3 * time.Second,
			ms(0, 1000, 2000, 2250, 2500, 2750)},
		{"the phase is the same fraction of each stretch's gap", 2, 0.5, []Step{{time.Second, 4}, {2 * time.Second, 0}, {3 * time.Second, 2}}, 4 * time.Second,
			ms(250, 750, 1125, 1375, 1625, 1875, 3250, 3750)},
		{"a step to the same rate restarts the spacing", 2, 0.5, []Step{{1100 * time.Millisecond, 2}}, 2 * time.Second,
			ms(250, 750, 1350, 1850)},
		{"a step at 0 replaces Rate from the start", 1, 0.5, []Step{{0, 2}}, time.Second,
			ms(250, 750)},
		{"a stretch too short for its phase holds no call", 1, 0.5, []Step{{time.Second, 1}, {1400 * time.Millisecond, 1}}, 2 * time.Second,
			ms(500, 1900)},
	} {
		c := Config{Duration: tc.end, Rate: tc.rate, Steps: tc.steps, Dependency: Healthy{}}
		assert.Equal(t, tc.want, arrivalTimes(t, c, withFrac(tc.frac, tc.rate))[0], tc.name)
	}
}

func TestPoissonArrivalsRestartAtEachStep(t *testing.T) {
	// Stretches of 100 ms at 5 and 20 calls a second: most gaps cross a step
	// and are drawn again from it, at the next stretch's rate.
	var steps []Step
	for at := 100 * time.Millisecond; at < 1000*time.Second; at += 100 * time.Millisecond {
		steps = append(steps, Step{At: at, Rate: []float64{20, 5}[len(steps)%2]})
	}
	c := Config{Seed: 3, Duration: 1000 * time.Second, Rate: 5, Arrivals: Poisson, Steps: steps, Dependency: Healthy{}}
	times := arrivalTimes(t, c, nil)[0]
	var inOdd int
	for _, at := range times {
		if at/(100*time.Millisecond)%2 == 1 {
			inOdd++
		}
	}
	assert.InEpsilon(t, 500*5+500*20, len(times), 0.03, "5/s for half the run, 20/s for the other half")
	assert.InEpsilon(t, 500*20, inOdd, 0.03, "each stretch at its own rate")
}

func TestArrivalsAreDeterministic(t *testing.T) {
	fleet := func(seed uint64, kind Arrivals) Config {
		return Config{
			Name: "fleet", Seed: seed, Duration: 20 * time.Second, Processes: 10, Rate: 20, Arrivals: kind,
			Steps:      []Step{{At: 5 * time.Second, Rate: 60}, {At: 10 * time.Second, Rate: 0}, {At: 13 * time.Second, Rate: 20}},
			Dependency: Outage{From: 6 * time.Second, To: 8 * time.Second},
			Client: Client{
				Breaker: &breaker.Config{}, Budget: &budget.Config{}, Retry: &Retry{},
				AttemptTimeout: time.Second, Deadline: 3 * time.Second,
			},
		}
	}
	render := func(c Config) string {
		r, err := Run(c)
		require.NoError(t, err)
		var b strings.Builder
		require.NoError(t, r.WriteSeries(&b))
		return r.String() + b.String()
	}
	want := render(fleet(1, Poisson))
	got := make([]string, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = render(fleet(1, Poisson)) })
	}
	wg.Wait()
	for i := range got {
		assert.Equal(t, want, got[i], "run %d: the same Config, the same bytes", i)
	}
	assert.NotEqual(t, want, render(fleet(2, Poisson)), "another seed, other arrivals")
	assert.NotEqual(t, want, render(fleet(1, Even)), "the same seed, even arrivals")

	// Each process draws its own gaps, from a stream that the size of the
	// fleet does not change.
	ten := arrivalTimes(t, fleet(1, Poisson), nil)
	for i := range ten {
		for j := range i {
			assert.NotEqual(t, ten[j][0], ten[i][0], "processes %d and %d", j, i)
		}
	}
	three := fleet(1, Poisson)
	three.Processes = 3
	assert.Equal(t, ten[:3], arrivalTimes(t, three, nil))
}

func TestArrivalsRefuseImpossibleSettings(t *testing.T) {
	c := Config{Duration: 10 * time.Second, Rate: 1, Dependency: Healthy{}, Arrivals: 7, Steps: []Step{
		{At: -1, Rate: 1},
		{At: 5 * time.Second, Rate: math.NaN()},
		{At: 5 * time.Second, Rate: -1},
		{At: 10 * time.Second, Rate: math.Inf(1)},
		{At: 12 * time.Second, Rate: 0},
	}}
	_, err := Run(c)
	require.Error(t, err)
	for _, want := range []string{
		"simulation: Config.Arrivals must be Even or Poisson, got simulation.Arrivals(7)",
		"simulation: Config.Steps[0].At must lie in [0, Config.Duration) (10s), got -1ns",
		"simulation: Config.Steps[1].Rate must be a finite number of at least 0, got NaN",
		"simulation: Config.Steps[2].At must be after Config.Steps[1].At (5s), got 5s",
		"simulation: Config.Steps[2].Rate must be a finite number of at least 0, got -1",
		"simulation: Config.Steps[3].At must lie in [0, Config.Duration) (10s), got 10s",
		"simulation: Config.Steps[3].Rate must be a finite number of at least 0, got +Inf",
		"simulation: Config.Steps[4].At must lie in [0, Config.Duration) (10s), got 12s",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "Config.Steps[0].Rate")
	assert.NotContains(t, err.Error(), "Config.Steps[4].Rate", "rate 0 is no calls, not an error")
	assert.NotContains(t, err.Error(), "Config.Steps[1].At must", "5s follows -1ns")

	err = Config{Rate: 1, Dependency: Healthy{}, Steps: []Step{{At: time.Second, Rate: 1}}}.Validate()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "Config.Steps", "without a Duration, only Duration is to blame")

	assert.NoError(t, Config{Duration: 2 * time.Second, Rate: 1, Dependency: Healthy{}, Arrivals: Poisson,
		Steps: []Step{{At: 0, Rate: 0}, {At: time.Second, Rate: 3}}}.Validate())
}

func TestReportSaysHowCallsArrived(t *testing.T) {
	steps := []Step{{At: 5 * time.Second, Rate: 30}, {At: 10500 * time.Millisecond, Rate: 0}}
	for _, tc := range []struct {
		kind  Arrivals
		steps []Step
		want  string
	}{
		{Even, nil, "run (seed 1): 2 process(es) x 10 calls/s for 20s\n"},
		{Even, []Step{}, "run (seed 1): 2 process(es) x 10 calls/s for 20s\n"},
		{Poisson, nil, "run (seed 1): 2 process(es) x 10 calls/s (Poisson arrivals) for 20s\n"},
		{Even, steps, "run (seed 1): 2 process(es) x 10 calls/s (then 30 from 5s, 0 from 10.5s) for 20s\n"},
		{Poisson, steps, "run (seed 1): 2 process(es) x 10 calls/s (Poisson arrivals; then 30 from 5s, 0 from 10.5s) for 20s\n"},
	} {
		c := Config{Seed: 1, Duration: 20 * time.Second, Processes: 2, Rate: 10, Arrivals: tc.kind, Steps: tc.steps, Dependency: Healthy{}}
		r, err := Run(c)
		require.NoError(t, err)
		header, _, _ := strings.Cut(r.String(), "  offered")
		assert.Equal(t, tc.want, header)
		assert.Equal(t, tc.kind, r.Arrivals)
		assert.Equal(t, tc.steps, r.Steps)
	}

	zero, err := Run(Config{Seed: 1, Duration: 20 * time.Second, Rate: 10, Dependency: Healthy{}})
	require.NoError(t, err)
	explicit, err := Run(Config{Seed: 1, Duration: 20 * time.Second, Rate: 10, Dependency: Healthy{}, Arrivals: Even, Steps: []Step{}})
	require.NoError(t, err)
	assert.Equal(t, zero.String(), explicit.String(), "Even and no steps are the default")

	c := Config{Seed: 1, Duration: 20 * time.Second, Rate: 10, Dependency: Healthy{}, Steps: []Step{{At: time.Second, Rate: 1}}}
	r, err := Run(c)
	require.NoError(t, err)
	c.Steps[0].Rate = 99
	assert.Equal(t, []Step{{At: time.Second, Rate: 1}}, r.Steps, "the report keeps a copy")
}

func TestArrivalsString(t *testing.T) {
	assert.Equal(t, "even", Even.String())
	assert.Equal(t, "Poisson", Poisson.String())
	assert.Equal(t, "simulation.Arrivals(9)", Arrivals(9).String())
}
