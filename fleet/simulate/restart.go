package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/simulation"
)

// Restart restarts a share of the fleet during a run, each chosen process
// once, as a deploy or an orchestrator replacing processes would. A restarted
// process is a new process to the fleet, since its id (Config.Process's
// default, the host name and the pid) changes:
//   - the old process ends at once, without Close: the outcomes of its
//     attempts in flight go to its old breaker, which nobody reads, and its
//     last report stays in Redis, counted until it is TTL old;
//   - the new process has a fresh breaker (closed, with no history) and,
//     under a sharing strategy, starts its fleet as fleet.New and Watch do:
//     Watch reads the fleet's view (one Redis trip) and applies it before
//     returning, so a new process that finds a quorum open starts with its
//     breaker forced open, and the fleet's rounds follow every Refresh from
//     its start;
//   - it makes the calls the old process would have made, at the same rate
//     and phase, from the moment Watch returns.
type Restart struct {
	// Share is the share of the processes restarted, in [0, 1], rounded to
	// a whole number of processes; 0 restarts none. They are drawn at random
	// (from the run's seed).
	Share float64
	// During is when the restarts happen, one after another at even
	// intervals from During.From. It must lie within the run when Share is
	// positive. Its Name names its band on a chart; empty means "restarts".
	During simulation.Interval
}

// Restarted is one process restarted during a run, and what the new process
// did until it first stopped calling.
type Restarted struct {
	// Process is the index of the process.
	Process int
	// At is when the new process started.
	At time.Duration
	// Doomed counts the doomed attempts the new process sent before its
	// breaker first refused a call.
	Doomed int
	// Stop is the time from At until the new process's breaker first refused
	// a call, -1 if it never did.
	Stop time.Duration
}

// validate refuses a share outside [0, 1] and, when some processes are
// restarted, restarts outside a run of duration d.
func (c Restart) validate(d time.Duration) error {
	switch {
	case math.IsNaN(c.Share) || c.Share < 0 || c.Share > 1:
		return fmt.Errorf("simulate: Config.Restart.Share must lie in [0, 1], got %v", c.Share)
	case c.Share > 0 && (c.During.From < 0 || c.During.To <= c.During.From || c.During.To > d):
		return fmt.Errorf("simulate: Config.Restart.During must lie within the run's %v and end after it starts, got [%v, %v)",
			d, c.During.From, c.During.To)
	}
	return nil
}

// count is how many of n processes c restarts.
func (c Restart) count(n int) int { return int(math.Round(c.Share * float64(n))) }

// planRestarts draws the processes to restart and schedules their restarts,
// recording each in the report in the order they happen.
func (r *run) planRestarts() {
	k := r.s.Restart.count(r.s.Processes)
	if k == 0 {
		return
	}
	during := r.s.Restart.During
	picks := rand.New(rand.NewPCG(r.s.Seed, discrete.Derive(r.s.Seed, streamRestart, 0))).Perm(r.s.Processes)[:k]
	r.rep.Restarts = make([]Restarted, k)
	for j, i := range picks {
		at := during.From + time.Duration(j)*(during.To-during.From)/time.Duration(k)
		r.rep.Restarts[j] = Restarted{Process: i, At: at, Stop: -1}
		r.push(event{at: at, kind: evRestart, proc: int32(i), slot: int32(j)})
	}
}

// restart replaces process i by a new process, the j-th restart of the run,
// under the id r.s.Processes + j.
func (r *run) restart(i, j int32) {
	p := &r.procs[i]
	id := int32(r.s.Processes) + j
	b, err := r.newBreaker(int(id)) // from the config that built the others: it cannot fail
	if err != nil {
		r.err = err
		return
	}
	*p = proc{b: b, id: id, period: p.period, phase: p.phase, calls: p.calls, restarted: j + 1}
	if r.s.Strategy == Independent {
		return
	}
	// fleet.New starts the loop's ticker, then Watch reads the view once.
	if next := r.Now + r.s.Refresh; next < r.s.Duration {
		r.push(event{at: next, kind: evRound, proc: i, slot: id})
	}
	p.from = r.trip(i, publication{at: r.Now})
}

// restartRefused notes that process p's breaker refused a call, the first
// refusal of a restarted process being when it stopped calling.
func (r *run) restartRefused(p *proc) {
	if p.restarted == 0 {
		return
	}
	if rs := &r.rep.Restarts[p.restarted-1]; rs.Stop < 0 {
		rs.Stop = r.Now - rs.At
	}
}

// restartDoomed counts a doomed attempt of process p, if it is a restarted
// process that has not stopped calling yet.
func (r *run) restartDoomed(p *proc) {
	if p.restarted == 0 {
		return
	}
	if rs := &r.rep.Restarts[p.restarted-1]; rs.Stop < 0 {
		rs.Doomed++
	}
}

// restartSummary describes the restarts of r and what the new processes
// did until they stopped calling: "50 processes, 35s to 44.8s; doomed calls
// before stopping 0 to 0 (0 in all); stopped 0.1s to 0.5s after starting".
func (r *Report) restartSummary() string {
	rs := r.Restarts
	lo, hi, all := rs[0].Doomed, rs[0].Doomed, 0
	stopped, first, last := 0, time.Duration(math.MaxInt64), time.Duration(0)
	for _, x := range rs {
		lo, hi, all = min(lo, x.Doomed), max(hi, x.Doomed), all+x.Doomed
		if x.Stop >= 0 {
			stopped++
			first, last = min(first, x.Stop), max(last, x.Stop)
		}
	}
	s := fmt.Sprintf("%d processes, %s to %s; doomed calls before stopping %d to %d (%d in all); ",
		len(rs), seconds(rs[0].At), seconds(rs[len(rs)-1].At), lo, hi, all)
	if stopped == 0 {
		return s + "none stopped"
	}
	return s + fmt.Sprintf("%d stopped, %s to %s after starting", stopped, seconds(first), seconds(last))
}

// restartBand is the band of the restarts on a chart, if any.
func (r *Report) restartBand() (simulation.Interval, bool) {
	if len(r.Restarts) == 0 {
		return simulation.Interval{}, false
	}
	d := r.Restart.During
	if d.Name == "" {
		d.Name = "restarts"
	}
	return d, true
}
