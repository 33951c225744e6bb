package simulation

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/criticality"
)

// String renders the report's summary as stable text: the same report always
// renders to the same bytes. The per-second series is left to
// [Report.WriteSeries].
func (r *Report) String() string {
	var b strings.Builder
	name := r.Name
	if name == "" {
		name = "run"
	}
	fmt.Fprintf(&b, "%s (seed %d): %d process(es) x %s calls/s%s for %s\n",
		name, r.Seed, r.Processes, number(r.Rate), r.load(), seconds(r.Duration))
	fmt.Fprintf(&b, "  offered       %d\n", r.Offered)
	fmt.Fprintf(&b, "  served        %d (availability %.2f%%)\n", r.Served, 100*r.Availability)
	fmt.Fprintf(&b, "  refused       %d by breaker, %d by budget", r.RefusedByBreaker, r.RefusedByBudget)
	if r.Limit != nil {
		fmt.Fprintf(&b, ", %d by the limit", r.RefusedByLimit)
	}
	if r.ThrottleRefusals > 0 {
		fmt.Fprintf(&b, " (the throttle refused %d attempts)", r.ThrottleRefusals)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  failed        %d", r.Failed)
	if r.Limit != nil {
		fmt.Fprintf(&b, " (%d timed out)", r.TimedOut)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  attempts      %d (%.3f per call; worst second %d: %.3f", r.Attempts, r.Amplification, r.WorstSecond, r.WorstAmplification)
	if len(r.Faults) > 0 {
		fmt.Fprintf(&b, "; during faults %.3f", r.FaultAmplification)
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "  latency       p50 %s, p90 %s, p99 %s (served calls, end to end)\n", millis(r.P50), millis(r.P90), millis(r.P99))
	if r.Hedging {
		fmt.Fprintf(&b, "  hedges        %d sent (%.3f per call; median delay %s), %d won, %d skipped\n",
			r.HedgesSent, ratio(r.HedgesSent, r.Offered), millis(r.HedgeDelay), r.HedgesWon, r.HedgesSkipped)
	}
	fmt.Fprintf(&b, "  breaker       %d opens", r.BreakerOpens)
	if r.BreakerOpens > 0 {
		fmt.Fprintf(&b, " (first at %s: %s)", seconds(r.FirstOpen), r.FirstOpenCause)
	}
	fmt.Fprintf(&b, ", %d probes (peak %d per 100ms at %s)\n", r.Probes, r.PeakProbes, seconds(r.PeakProbesAt))
	if r.Ramping {
		fmt.Fprintf(&b, "  ramps         %d started: %d closed the breaker, %d re-opened it\n", r.Ramps, r.RampsDone, r.RampsFailed)
	}
	if r.Limit != nil {
		r.writeLimit(&b)
	}
	if r.SlowJudge != nil {
		fmt.Fprintf(&b, "  slow calls    %d of %d judged slow by %s; trip window peak %.3f, ", r.Slow, r.Judged, r.SlowJudge, r.PeakSlowFraction)
		if r.SlowTrip {
			fmt.Fprintf(&b, "reached %s at %s\n", number(r.SlowCallRatio), seconds(r.SlowTripAt))
		} else {
			fmt.Fprintf(&b, "never reached %s\n", number(r.SlowCallRatio))
		}
	}
	switch {
	case len(r.Faults) == 0:
		b.WriteString("  recovery      no faults\n")
	case r.Stable:
		fmt.Fprintf(&b, "  recovery      %s after the last fault ended (stable after %s)\n", seconds(r.TimeToRecover), seconds(r.TimeToStable))
	case r.Recovered:
		fmt.Fprintf(&b, "  recovery      %s after the last fault ended (not stable)\n", seconds(r.TimeToRecover))
	default:
		b.WriteString("  recovery      not within the run\n")
	}
	return b.String()
}

// writeLimit renders what limited a run's calls and, when they were drawn
// a level, each level's count.
func (r *Report) writeLimit(b *strings.Builder) {
	fmt.Fprintf(b, "  limit         %s", r.Limiter)
	if r.Limit.Critical > 0 {
		fmt.Fprintf(b, "; %s of the calls critical", number(r.Limit.Critical))
		if r.Limit.Unmarked {
			b.WriteString(", unmarked")
		}
	}
	b.WriteByte('\n')
	for l := criticality.Sheddable; l <= criticality.Critical; l++ {
		if lv := r.Levels[l]; lv.Offered > 0 {
			fmt.Fprintf(b, "  %-13s %d offered, %d served (%.2f%%), %d refused, %d failed (%d timed out), p99 %s\n",
				l, lv.Offered, lv.Served, 100*ratio(lv.Served, lv.Offered), lv.Refused, lv.Failed, lv.TimedOut, millis(lv.P99))
		}
	}
}

// load renders how the calls arrived when it is not the default (even
// arrivals at Rate throughout), such as " (Poisson arrivals; then 300 from
// 10s, 0 from 20s)", and "" when it is.
func (r *Report) load() string {
	var parts []string
	if r.Arrivals != Even {
		parts = append(parts, r.Arrivals.String()+" arrivals")
	}
	if len(r.Steps) > 0 {
		steps := make([]string, len(r.Steps))
		for i, st := range r.Steps {
			steps[i] = number(st.Rate) + " from " + seconds(st.At)
		}
		parts = append(parts, "then "+strings.Join(steps, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// WriteSeries writes the per-second series as a table with a header line, one
// line per second, columns separated by tabs: the fields of [Second], with
// Hedges only when the run hedged, Judged, Slow, SlowFraction and Threshold
// (in milliseconds) only when it had a slow judge, Ramping, RampFraction,
// and RampHeld only when its breakers had a recovery ramp, and
// RefusedByLimit, TimedOut, Limit, Held and P50 (in milliseconds) only
// when it had a limit.
func (r *Report) WriteSeries(w io.Writer) error {
	var b strings.Builder
	b.WriteString("second\toffered\tattempts\tserved\trefused_breaker\trefused_budget\tfailed\tprobes")
	if r.Hedging {
		b.WriteString("\thedges")
	}
	if r.SlowJudge != nil {
		b.WriteString("\tjudged\tslow\tslow_fraction\tthreshold_ms")
	}
	if r.Ramping {
		b.WriteString("\tramping\tramp_fraction\tramp_held")
	}
	if r.Limit != nil {
		b.WriteString("\trefused_limit\ttimed_out\tlimit\theld\tp50_ms")
	}
	b.WriteByte('\n')
	for i, s := range r.Seconds {
		fmt.Fprintf(&b, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", i, s.Offered, s.Attempts, s.Served, s.RefusedByBreaker, s.RefusedByBudget, s.Failed, s.Probes)
		if r.Hedging {
			fmt.Fprintf(&b, "\t%d", s.Hedges)
		}
		if r.SlowJudge != nil {
			fmt.Fprintf(&b, "\t%d\t%d\t%.4f\t%.1f", s.Judged, s.Slow, s.SlowFraction, float64(s.Threshold)/float64(time.Millisecond))
		}
		if r.Ramping {
			fmt.Fprintf(&b, "\t%d\t%.4f\t%.4f", s.Ramping, s.RampFraction, s.RampHeld)
		}
		if r.Limit != nil {
			fmt.Fprintf(&b, "\t%d\t%d\t%d\t%d\t%.1f", s.RefusedByLimit, s.TimedOut, s.Limit, s.Held, float64(s.P50)/float64(time.Millisecond))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// number formats f in its shortest exact form.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// seconds formats d in seconds with up to three decimals, such as "12.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + "s"
}

// millis formats d in milliseconds with one decimal, such as "21.3ms".
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}
