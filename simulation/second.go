package simulation

import (
	"time"

	"github.com/resilience-go/pipeline/criticality"
)

// Second is one second of a run. Calls (Offered, Served, Refused*, Failed)
// are counted in the second they were offered, however long they ran, so
// Served / Offered is the availability of the calls offered in that second;
// attempts, probes and hedges are counted in the second they started (the
// ramp's figures too, refused attempts included); judged samples in the
// second they ended.
type Second struct {
	Offered          int
	Attempts         int
	Served           int
	RefusedByBreaker int
	RefusedByBudget  int
	RefusedByLimit   int
	Failed           int
	// TimedOut is the failed calls whose last attempt the client cut at
	// its timeout, which Failed includes.
	TimedOut int
	Probes   int
	// Hedges is the hedges sent, which Attempts includes.
	Hedges int
	// Judged is the number of samples the slow judges judged, and Slow those
	// they found slow. SlowFraction is the highest slow fraction of a judge's
	// trip window after one of them, among windows holding at least
	// MinimumCalls samples (0 if none), and Threshold the mean of the thresholds
	// they were judged against, among those judged with an armed threshold (0
	// if none). A judge reading the breaker's threshold judges a sample above
	// the breaker's constant SlowCallThreshold slow without reading it, as the
	// breaker does, and leaves it out of that mean.
	Judged, Slow int
	SlowFraction float64
	Threshold    time.Duration
	// Ramping is the number of attempts offered, in the second, to a breaker
	// that was Recovering, admitted or refused. RampFraction is the mean over
	// them of the fraction the breaker was admitting, and RampHeld the share of
	// them offered while slow calls held the ramp (Snapshot's RampFraction and
	// RampHeld, read just before each was offered); both are 0 when Ramping is
	// 0.
	Ramping                int
	RampFraction, RampHeld float64
	// With a limit (Client.Limit): Limit is the processes' limits summed,
	// after the last call that ended in the second (carried over from the
	// second before if none did; 0 without a bulkhead or adaptive limit);
	// Held the most attempts the dependency held at once in the second,
	// working or queued inside it, those the client no longer waits for
	// included; P50 the median latency of the second's served calls (0 if
	// none); LevelServed the second's served calls by criticality level, as
	// Report.Levels is indexed.
	Limit       int
	Held        int
	P50         time.Duration
	LevelServed [criticality.Levels + 1]int
}
