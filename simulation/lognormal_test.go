package simulation

import (
	"math"
	"time"
)

// logNormal is the latency distribution of a Healthy model: ln L is normal
// with mean mu and standard deviation sigma.
type logNormal struct{ mu, sigma float64 }

func fitted(h Healthy) logNormal {
	mu := math.Log(float64(h.P50))
	return logNormal{mu, (math.Log(float64(h.P99)) - mu) / z99}
}

// survival is P(L > x).
func (l logNormal) survival(x time.Duration) float64 {
	if x <= 0 {
		return 1
	}
	return 0.5 * math.Erfc((math.Log(float64(x))-l.mu)/(l.sigma*math.Sqrt2))
}

// quantile is the q-th quantile of L, by bisection on its survival.
func (l logNormal) quantile(q float64) time.Duration {
	return solve(func(x time.Duration) float64 { return l.survival(x) - (1 - q) })
}

// solve finds the root of a function decreasing from positive to negative
// over (0, 1 h], to the nanosecond.
func solve(f func(time.Duration) float64) time.Duration {
	lo, hi := time.Duration(0), time.Hour
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// expect integrates g(L) over the distribution of L, for L > x.
func (l logNormal) expect(x time.Duration, g func(time.Duration) float64) float64 {
	from := -9.0
	if x > 0 {
		from = max(from, (math.Log(float64(x))-l.mu)/l.sigma)
	}
	const to, steps = 9.0, 1000
	h := (to - from) / steps
	sum := 0.0
	for i := range steps {
		z := from + (float64(i)+0.5)*h
		sum += math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) * g(time.Duration(math.Exp(l.mu+l.sigma*z))) * h
	}
	return sum
}

// hedgeWins is the probability that a hedge sent after d wins the race against
// the first copy it was sent for, both of latency L, independent:
// P(d + L2 < L1 | L1 > d).
func (l logNormal) hedgeWins(d time.Duration) float64 {
	return l.expect(d, func(x time.Duration) float64 { return 1 - l.survival(x-d) }) / l.survival(d)
}

// sampled is the distribution function, at x, of the latency samples a hedge
// stage with delay d feeds its estimator, per the stage's rules: a call whose
// first copy takes L1 <= d gives L1; a hedged one whose first copy wins
// (L1 < d + L2) gives L1; one whose hedge wins gives the first copy's lower
// bound d + L2 and the hedge's own L2. won is P(d + L2 < L1), so that a call
// gives 1 + won samples on average.
func (l logNormal) sampled(d, x time.Duration, won float64) float64 {
	above := 0.0
	if x < d {
		above = l.survival(x) - l.survival(d) // unhedged, in (x, d]
	}
	above += l.expect(max(x, d), func(y time.Duration) float64 { return l.survival(y - d) }) // first copies that won
	above += l.expect(x-d, func(y time.Duration) float64 { return l.survival(y + d) })       // lower bounds d + L2
	above += l.expect(x, func(y time.Duration) float64 { return l.survival(y + d) })         // hedges that won
	return 1 - above/(1+won)
}

// estimatedDelay is what the estimator reads as the q-th quantile of the
// samples a delay d produces, in expectation: the latency package's histogram
// buckets (bounds ceil(2^(i/4)) ns), the bucket that holds the quantile's rank
// (found from d/2 up), and the placement within it by the bucket's mean: the
// bucket's samples read as spread evenly, by rank, over the widest interval
// centred on their mean that fits in the bucket.
func (l logNormal) estimatedDelay(d time.Duration, q float64) time.Duration {
	won := l.hedgeWins(d) * l.survival(d)
	bound := func(i int) time.Duration { return time.Duration(math.Ceil(math.Pow(2, float64(i)/4))) }
	i := int(4 * math.Log2(float64(d/2)))
	lo := bound(i)
	flo := l.sampled(d, lo, won)
	for ; i < 4*35; i++ {
		hi := bound(i + 1)
		fhi := l.sampled(d, hi, won)
		if flo < q && q <= fhi {
			// The bucket's mean: lo plus the integral of P(lo < X, X > x) over
			// the bucket, over P(X in the bucket), by the midpoint rule.
			const steps = 32
			w := float64(hi-lo) / steps
			above := 0.0
			for k := range steps {
				x := lo + time.Duration((float64(k)+0.5)*w)
				above += (fhi - l.sampled(d, x, won)) * w
			}
			mean := float64(lo) + above/(fhi-flo)
			h := min(mean-float64(lo), float64(hi)-mean)
			return time.Duration(mean + h*(2*(q-flo)/(fhi-flo)-1))
		}
		lo, flo = hi, fhi
	}
	return 0
}

// settledDelay iterates estimatedDelay from d until it stops moving: a stable
// delay of the hedge stage on this dependency.
func (l logNormal) settledDelay(d time.Duration, q float64) time.Duration {
	for range 100 {
		next := l.estimatedDelay(d, q)
		if (next - d).Abs() < 10*time.Microsecond {
			return next
		}
		d = next
	}
	return d
}

// tripModel is the expected slow fraction of a breaker's trip window through
// a brownout that multiplies latency by factor from a bucket boundary on: the
// healthy samples still in the window, a fraction healthy of them slow, and the
// brownout's samples, each counted when it ends and slow when it is above the
// threshold of the moment it started (s after the brownout began).
type tripModel struct {
	l         logNormal
	factor    float64
	span      time.Duration // the trip window
	buckets   int
	healthy   float64
	threshold func(s time.Duration) time.Duration
}

// fraction returns the expected slow fraction of the window x into the
// brownout. The window is the bucket holding the moment and the buckets-1
// before it, so buckets-1-floor(x/width) whole buckets of healthy samples are
// left in it.
func (m tripModel) fraction(x time.Duration) float64 {
	width := m.span / time.Duration(m.buckets)
	h := float64(max(0, int64(m.buckets-1)-int64(x/width))) * width.Seconds()
	const step = 10 * time.Millisecond
	var slow, ended float64
	for s := step / 2; s < x; s += step {
		running := m.l.survival(time.Duration(float64(x-s) / m.factor)) // P(it has not ended by x)
		ended += (1 - running) * step.Seconds()
		slow += max(0, m.l.survival(time.Duration(float64(m.threshold(s))/m.factor))-running) * step.Seconds()
	}
	return (m.healthy*h + slow) / (h + ended)
}

// trip returns how long after the brownout starts the expected fraction first
// reaches ratio, to 50 ms, or -1 if it does not within two windows.
func (m tripModel) trip(ratio float64) time.Duration {
	for x := 50 * time.Millisecond; x < 2*m.span; x += 50 * time.Millisecond {
		if m.fraction(x) >= ratio {
			return x
		}
	}
	return -1
}

// drifting returns the threshold multiple x the median of a baseline that
// holds warm of healthy successes and, s into the brownout, s of browned-out
// ones (the baseline's window has not begun to forget: nothing expires), read
// on a grid of 100 ms.
func (l logNormal) drifting(factor float64, warm time.Duration, multiple float64) func(s time.Duration) time.Duration {
	memo := map[time.Duration]time.Duration{}
	return func(s time.Duration) time.Duration {
		k := s / (100 * time.Millisecond)
		if d, ok := memo[k]; ok {
			return d
		}
		w, b := warm.Seconds(), (k * 100 * time.Millisecond).Seconds()
		median := solve(func(x time.Duration) float64 {
			below := (w*(1-l.survival(x)) + b*(1-l.survival(time.Duration(float64(x)/factor)))) / (w + b)
			return 0.5 - below
		})
		memo[k] = time.Duration(multiple * float64(median))
		return memo[k]
	}
}
