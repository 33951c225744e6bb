package simulate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation"
)

// Report is what one run measured.
type Report struct {
	// The run's Config, with its defaults applied.
	Name      string
	Variant   string
	Strategy  Strategy
	Situation Situation
	Seed      uint64
	Processes int
	Rate      float64
	Rates     []float64 // Config.Rates: nil for an even load
	Duration  time.Duration
	Fault     simulation.Interval
	Restart   Restart
	Redis     simulation.Model // nil: an instant Redis

	// SparedRefused counts the calls refused to the processes the fault
	// does not reach (in the sick-process and zone-outage situations): every
	// one of them was refused wrongly.
	SparedRefused int
	// Follows counts the breaks the fleet forced on a closed breaker (not
	// their renewals).
	Follows int
	// Rounds counts the round trips to Redis: every round, and the read of
	// each restarted process's Watch; FailedRounds those that failed (Redis
	// absent, or slower than the round's timeout), and Degraded the failures
	// that raised fleet.Degraded, the first of each process's outage. All
	// are 0 without sharing.
	Rounds, FailedRounds, Degraded int
	// Restarts are the processes restarted during the run, in the order of
	// their restarts.
	Restarts []Restarted
	// Stops holds, for each process, the time from the fault's start until
	// it stopped calling: its breaker refused a call for the first time
	// since, open on its own evidence or following the fleet. It is -1 for
	// a process that never did.
	Stops []time.Duration
	// Opened holds, for each process, the time from the fault's start until
	// its breaker first left Closed, tripping on its own evidence or forced
	// open by the fleet, -1 for a process whose breaker never did. It is
	// when the process stopped sending calls, where Stops waits for a call
	// to refuse.
	Opened []time.Duration
	// Seconds is the run, second by second, each call counted in the second
	// it was offered.
	Seconds []Second
}

// Second is one second of a run.
type Second struct {
	// Offered is the calls the processes offered their breakers.
	Offered int
	// Attempts is the calls the breakers admitted, sent to the dependency.
	Attempts int
	// Doomed is the attempts sent while the call was bound to fail: during
	// the outage, or from the sick process while it is sick.
	Doomed int
	// Refused is the calls the breakers refused, and WronglyRefused those of
	// them that would have been served: the dependency was serving their
	// process.
	Refused, WronglyRefused int
}

// Totals returns the sum of r's seconds.
func (r *Report) Totals() Second {
	var t Second
	for _, s := range r.Seconds {
		t.Offered += s.Offered
		t.Attempts += s.Attempts
		t.Doomed += s.Doomed
		t.Refused += s.Refused
		t.WronglyRefused += s.WronglyRefused
	}
	return t
}

// Reached reports whether the fault reaches process i: every process in an
// outage, only process 0 when it is the sick one, every third process in a
// zone outage.
func (r *Report) Reached(i int) bool {
	switch r.Situation {
	case SickProcess:
		return i == 0
	case ZoneOutage:
		return i%3 == 0
	}
	return true
}

// Label names the run among those of its case: its strategy, and its
// variant if it has one, such as "quorum, Redis instant".
func (r *Report) Label() string {
	if r.Variant == "" {
		return r.Strategy.String()
	}
	return r.Strategy.String() + ", " + r.Variant
}

// TimeToStop returns how long after the fault's start a fraction of the
// processes had stopped calling (see Stops): of those the
// fault reaches when reached is set, else of the others. ok is false when
// that many never stopped, or there are no such processes.
func (r *Report) TimeToStop(fraction float64, reached bool) (d time.Duration, ok bool) {
	return r.timeTo(r.Stops, fraction, reached)
}

// TimeToOpen is TimeToStop for the times the breakers first opened (see
// Opened).
func (r *Report) TimeToOpen(fraction float64, reached bool) (d time.Duration, ok bool) {
	return r.timeTo(r.Opened, fraction, reached)
}

// timeTo returns when a fraction of the processes (those the fault reaches
// when reached is set, else the others) had a time in times, -1 meaning
// never.
func (r *Report) timeTo(times []time.Duration, fraction float64, reached bool) (d time.Duration, ok bool) {
	var ts []time.Duration
	n := 0
	for i, s := range times {
		if r.Reached(i) != reached {
			continue
		}
		n++
		if s >= 0 {
			ts = append(ts, s)
		}
	}
	need := int(math.Ceil(fraction * float64(n)))
	if n == 0 || need > len(ts) {
		return 0, false
	}
	slices.Sort(ts)
	return ts[max(need-1, 0)], true
}

// reached returns the number of processes the fault reaches, and how many
// of them stopped calling.
func (r *Report) reached() (n, stopped int) {
	for i, s := range r.Stops {
		if r.Reached(i) {
			n++
			if s >= 0 {
				stopped++
			}
		}
	}
	return n, stopped
}

// stopFractions are the fractions the reports give a time to stop for.
var stopFractions = []float64{0.5, 0.9, 1}

// String renders the report's summary as stable text.
func (r *Report) String() string {
	var b strings.Builder
	t := r.Totals()
	rate := number(r.Rate)
	if len(r.Rates) > 0 {
		parts := make([]string, len(r.Rates))
		for i, v := range r.Rates {
			parts[i] = number(v)
		}
		rate = "(" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(&b, "%s/%s (seed %d): %d processes x %s calls/s for %s, %s from %s to %s\n",
		r.Name, r.Label(), r.Seed, r.Processes, rate, seconds(r.Duration), r.Situation, seconds(r.Fault.From), seconds(r.Fault.To))
	fmt.Fprintf(&b, "  offered          %d\n", t.Offered)
	fmt.Fprintf(&b, "  attempts         %d, of which doomed %d\n", t.Attempts, t.Doomed)
	fmt.Fprintf(&b, "  refused          %d, of which wrongly %d", t.Refused, t.WronglyRefused)
	if r.Situation != Outage {
		fmt.Fprintf(&b, " (%d to the processes the fault spared)", r.SparedRefused)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  forced breaks    %d\n", r.Follows)
	if r.Redis != nil && r.Rounds > 0 {
		fmt.Fprintf(&b, "  rounds failed    %d of %d, raising Degraded %d times\n", r.FailedRounds, r.Rounds, r.Degraded)
	}
	if len(r.Restarts) > 0 {
		fmt.Fprintf(&b, "  restarted        %s\n", r.restartSummary())
	}
	for _, reached := range []bool{true, false} {
		label := "reached by the fault"
		if !reached {
			label = "spared by the fault"
		}
		n, stopped := r.spared()
		if reached {
			n, stopped = r.reached()
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "  stopped calling  %d of %d processes %s", stopped, n, label)
		if stopped > 0 {
			var parts []string
			for _, f := range stopFractions {
				if d, ok := r.TimeToStop(f, reached); ok {
					parts = append(parts, fmt.Sprintf("%s%% by %s", number(100*f), seconds(d)))
				}
			}
			if len(parts) > 0 {
				b.WriteString(" (" + strings.Join(parts, ", ") + " after the fault began)")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// number formats f in its shortest exact form.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// seconds formats d in seconds with up to three decimals, such as "12.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Round(time.Millisecond).Milliseconds())/1000, 'f', -1, 64) + "s"
}
