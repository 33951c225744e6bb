package simulation

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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
	if r.ThrottleRefusals > 0 {
		fmt.Fprintf(&b, " (the throttle refused %d attempts)", r.ThrottleRefusals)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  failed        %d\n", r.Failed)
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
// (in milliseconds) only when it had a slow judge, and Ramping, RampFraction,
// and RampHeld only when its breakers had a recovery ramp.
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
