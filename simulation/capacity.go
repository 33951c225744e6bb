package simulation

import (
	"fmt"
	"math"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Defaults of Capacity's zero-valued fields.
const (
	// defaultCold is the fraction of its capacity a cold dependency has.
	defaultCold = 0.2
	// defaultWarmup is how long a cold dependency takes to warm when it serves
	// at its current capacity.
	defaultWarmup = 10 * time.Second
	// defaultCooldown is how long a warm dependency left idle takes to go cold.
	defaultCooldown = 10 * time.Second
	// defaultKnockback is how long a warm dependency kept overloaded takes to go
	// cold.
	defaultKnockback = 2 * time.Second
	// defaultSaturation is how many times slower than its base a dependency
	// answers at full load.
	defaultSaturation = 3.0
)

// Capacity is a dependency whose success and latency depend on the load offered
// to it, and whose capacity depends on how warm it is: caches, connection pools
// and autoscaling fill up with use and empty without it.
//
// Its load L, at an attempt, is the number of attempts that reached it in the
// last second, that one included. Its warmth w runs from 0 (cold) to 1 (warm),
// and its current capacity is C = Rate x (Cold + (1-Cold) x w) attempts per
// second; its utilisation is u = L / C. An attempt first gets the base model's
// answer; if that is a success, its latency is multiplied by
// 1 + (Saturation-1) x min(u, 1)^2, and when u > 1 it fails Transient with
// probability 1 - 1/u, so that an overloaded dependency serves about C attempts
// a second and sheds the rest.
//
// Warmth moves between attempts, judged by the utilisation at the previous
// attempt for up to a second after it: at or under capacity it rises by
// u/Warmup per second (cold to warm in Warmup at full utilisation, slower with
// less use); over capacity it falls by 1/Knockback per second; and once a second
// has passed with no attempt the dependency is idle and warmth falls by
// 1/Cooldown per second. An [Outage] wrapped around a Capacity keeps attempts
// from reaching it, so it cools during the outage.
//
// A Capacity has no default Rate; every other zero field means its default.
type Capacity struct {
	// Base answers the attempts of a lightly loaded dependency. Nil means
	// Healthy{}.
	Base Model
	// Rate is how many attempts a second the warm dependency serves, above 0.
	// It has no default.
	Rate float64
	// Cold is the fraction of Rate a cold dependency serves, in (0, 1]. Zero
	// means 0.2.
	Cold float64
	// Warmup is how long a cold dependency serving at its capacity takes to warm.
	// Zero means 10 s.
	Warmup time.Duration
	// Cooldown is how long an idle warm dependency takes to go cold. Zero means
	// 10 s.
	Cooldown time.Duration
	// Knockback is how long an overloaded warm dependency takes to go cold.
	// Zero means 2 s.
	Knockback time.Duration
	// Saturation is the latency multiplier at full utilisation, at least 1.
	// Zero means 3.
	Saturation float64
	// StartCold starts the run with a cold dependency; by default it starts warm.
	StartCold bool
}

// Start validates c and returns its state for one run.
func (c Capacity) Start() (Dependency, error) {
	if !(c.Rate > 0 && !math.IsInf(c.Rate, 1)) {
		return nil, fmt.Errorf("simulation: Capacity.Rate must be a finite number above 0, got %v", c.Rate)
	}
	if c.Cold == 0 {
		c.Cold = defaultCold
	}
	if !(c.Cold > 0 && c.Cold <= 1) {
		return nil, fmt.Errorf("simulation: Capacity.Cold must be in (0, 1], got %v", c.Cold)
	}
	for _, f := range [...]struct {
		name string
		d    *time.Duration
		def  time.Duration
	}{{"Warmup", &c.Warmup, defaultWarmup}, {"Cooldown", &c.Cooldown, defaultCooldown}, {"Knockback", &c.Knockback, defaultKnockback}} {
		if *f.d < 0 {
			return nil, fmt.Errorf("simulation: Capacity.%s must not be negative, got %v", f.name, *f.d)
		}
		if *f.d == 0 {
			*f.d = f.def
		}
	}
	if c.Saturation == 0 {
		c.Saturation = defaultSaturation
	}
	if !(c.Saturation >= 1 && !math.IsInf(c.Saturation, 1)) {
		return nil, fmt.Errorf("simulation: Capacity.Saturation must be a finite number of at least 1, got %v", c.Saturation)
	}
	base, err := startBase(c.Base)
	if err != nil {
		return nil, err
	}
	d := &capacity{
		base:       base,
		rate:       c.Rate,
		cold:       c.Cold,
		warmup:     c.Warmup.Seconds(),
		cooldown:   c.Cooldown.Seconds(),
		knockback:  c.Knockback.Seconds(),
		saturation: c.Saturation,
		warmth:     1,
	}
	if c.StartCold {
		d.warmth = 0
	}
	return d, nil
}

// Faults returns the base model's faults: overload is not a scheduled fault.
func (c Capacity) Faults() []Interval { return faultsOf(c.Base) }

// capacity is one run's state of a Capacity model.
type capacity struct {
	base                        Dependency
	rate, cold                  float64
	warmup, cooldown, knockback float64 // seconds
	saturation                  float64
	warmth                      float64       // 0 cold .. 1 warm
	last                        time.Duration // when the previous attempt arrived
	lastUse                     float64       // utilisation at the previous attempt
	arrivals                    []time.Duration
	head                        int // arrivals[head:] are within the last second
}

// Respond updates the dependency's warmth and load and answers the attempt.
func (c *capacity) Respond(a Attempt) Response {
	c.warm(a.At)
	use := float64(c.arrive(a.At)) / c.capacity()
	c.last, c.lastUse = a.At, use

	r := c.base.Respond(a)
	if r.Verdict.Kind != outcome.OK {
		return r
	}
	u := min(use, 1)
	r.Latency = scaled(float64(r.Latency), 1+(c.saturation-1)*u*u)
	if use > 1 && a.Rand.Float64() >= 1/use {
		r.Verdict = outcome.Verdict{Kind: outcome.Transient}
	}
	return r
}

// capacity returns how many attempts a second the dependency serves now.
func (c *capacity) capacity() float64 {
	return c.rate * (c.cold + (1-c.cold)*c.warmth)
}

// warm moves the warmth from the previous attempt to now: for up to a second
// after that attempt its utilisation decides, and after that the dependency is
// idle.
func (c *capacity) warm(now time.Duration) {
	busy := min(now-c.last, time.Second).Seconds()
	idle := max(now-c.last-time.Second, 0).Seconds()
	if c.lastUse > 1 {
		c.warmth -= busy / c.knockback
	} else {
		c.warmth += busy * c.lastUse / c.warmup
	}
	c.warmth -= idle / c.cooldown
	c.warmth = min(max(c.warmth, 0), 1)
}

// arrive records an attempt at now and returns how many arrived in the last
// second, (now-1s, now], this one included.
func (c *capacity) arrive(now time.Duration) int {
	c.arrivals = append(c.arrivals, now)
	for c.arrivals[c.head] <= now-time.Second {
		c.head++
	}
	if c.head > 1024 && c.head*2 > len(c.arrivals) {
		n := copy(c.arrivals, c.arrivals[c.head:])
		c.arrivals, c.head = c.arrivals[:n], 0
	}
	return len(c.arrivals) - c.head
}
