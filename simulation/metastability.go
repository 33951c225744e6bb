package simulation

import (
	"errors"
	"fmt"
	"time"
)

// The metastability grid: does a client ever make an outage worse than plain
// retries would? Each cell of the grid is a load and an outage of a
// dependency that must warm ([Capacity]); each client runs every cell with
// every seed, and is judged against the baseline by [Grid]'s rule.

// Defaults of a [Grid]'s zero-valued fields: the grid of issue #26.
var (
	// defaultGridLoads are the calls a second the one process offers.
	defaultGridLoads = []float64{30, 50, 70, 90}
	// defaultGridOutages are the outages' lengths; 0 is no outage.
	defaultGridOutages = []time.Duration{0, 2 * time.Second, 5 * time.Second, 10 * time.Second}
	// defaultGridSeeds are the seeds every cell runs with.
	defaultGridSeeds = []uint64{1, 2, 3}
)

const (
	// defaultGridAt is when the outage starts.
	defaultGridAt = 20 * time.Second
	// defaultGridDuration is how long each run offers calls.
	defaultGridDuration = 120 * time.Second
	// defaultGridCapacity is the warm dependency's attempts a second.
	defaultGridCapacity = 100
	// gridTail is the end of each run over which a cell's LastShare is read.
	gridTail = 20 * time.Second
	// gridSlack is how much availability a client may lose to the baseline in
	// a cell, and gridLate how much later it may end stable, and still pass.
	gridSlack = 0.02
	gridLate  = 5 * time.Second
	// gridEscapes is how many of the cells where the baseline stays stuck a
	// client must escape (or every one, if there are fewer).
	gridEscapes = 2
)

// Grid is the metastability scenario: a one-process client calls a
// [Capacity] dependency that goes out for each of Outages from At, at each
// of Loads, with each of Seeds, and every client of Clients runs every cell.
// The first client is the baseline, the others are judged against it, cell
// by cell (see [GridReport.Judge]): a client passes the grid when, in every
// cell, its availability is at least the baseline's less 0.02,
// and in every seed where the baseline ends stable it ends stable too, at most
// 5 s after it; and when it ends stable in every seed of at
// least 2 of the cells where the baseline does not (all of
// them, if there are fewer). Stable is [Report]'s TimeToStable rule, counted
// from the outage's end (from At when there is no outage).
//
// The zero value of every field but Clients is the grid of issue #26.
type Grid struct {
	// Name labels the grid in its report. Empty means "metastability".
	Name string
	// Dependency is the dependency that warms and cools; an [Outage] is wrapped
	// around it. A zero Rate means 100.
	Dependency Capacity
	// Loads, Outages and Seeds are the grid's axes. Nil means
	// loads of 30, 50, 70 and 90 calls a second, outages of 0 (none), 2, 5
	// and 10 s, and seeds 1, 2 and 3.
	Loads   []float64
	Outages []time.Duration
	Seeds   []uint64
	// At is when each outage starts. Zero means 20 s.
	At time.Duration
	// Duration is how long each run offers calls. Zero means
	// 120 s.
	Duration time.Duration
	// Arrivals is how the calls arrive ([Even] by default).
	Arrivals Arrivals
	// Clients are the clients compared, the baseline first. It needs two.
	Clients []GridClient
}

// GridClient is one client of a [Grid]: a name for the report and how it
// calls the dependency.
type GridClient struct {
	Name   string
	Client Client
}

// defaults returns g with its zero fields filled in.
func (g Grid) defaults() Grid {
	if g.Name == "" {
		g.Name = "metastability"
	}
	if g.Dependency.Rate == 0 {
		g.Dependency.Rate = defaultGridCapacity
	}
	if g.Loads == nil {
		g.Loads = defaultGridLoads
	}
	if g.Outages == nil {
		g.Outages = defaultGridOutages
	}
	if g.Seeds == nil {
		g.Seeds = defaultGridSeeds
	}
	if g.At == 0 {
		g.At = defaultGridAt
	}
	if g.Duration == 0 {
		g.Duration = defaultGridDuration
	}
	return g
}

// config returns the run of client k in the cell of load and outage, with
// seed.
func (g Grid) config(k int, load float64, outage time.Duration, seed uint64) Config {
	var dep Model = g.Dependency
	if outage > 0 {
		dep = Outage{Base: g.Dependency, From: g.At, To: g.At + outage}
	}
	return Config{
		Name:       fmt.Sprintf("%s/%s/%v/%s", g.Name, g.Clients[k].Name, load, outage),
		Seed:       seed,
		Duration:   g.Duration,
		Dependency: dep,
		Rate:       load,
		Arrivals:   g.Arrivals,
		Client:     g.Clients[k].Client,
	}
}

// Run runs every cell of g with every client and seed, and returns what they
// did, or an error naming the first setting that cannot work.
func (g Grid) Run() (*GridReport, error) {
	g = g.defaults()
	if len(g.Clients) < 2 {
		return nil, errors.New("simulation: Grid.Clients needs a baseline and at least one client to judge")
	}
	if g.At+gridTail > g.Duration {
		return nil, fmt.Errorf("simulation: Grid.Duration (%v) must leave %v after Grid.At (%v)", g.Duration, gridTail, g.At)
	}
	r := &GridReport{Name: g.Name, Loads: g.Loads, Outages: g.Outages, Seeds: g.Seeds, Duration: g.Duration}
	for _, c := range g.Clients {
		r.Clients = append(r.Clients, c.Name)
	}
	for _, outage := range g.Outages {
		for _, load := range g.Loads {
			cell := GridCell{Load: load, Outage: outage}
			for k := range g.Clients {
				var res GridResult
				for _, seed := range g.Seeds {
					rep, err := Run(g.config(k, load, outage, seed))
					if err != nil {
						return nil, fmt.Errorf("simulation: Grid %s, client %s: %w", g.Name, g.Clients[k].Name, err)
					}
					res.add(rep, g.At+outage, g.Duration, len(g.Seeds))
				}
				cell.Results = append(cell.Results, res)
			}
			r.Cells = append(r.Cells, cell)
		}
	}
	return r, nil
}

// GridReport is what a [Grid] found: a cell per outage and load, in the
// order of Outages then Loads, each with a result per client, in the order
// of Grid.Clients.
type GridReport struct {
	Name     string
	Clients  []string
	Loads    []float64
	Outages  []time.Duration
	Seeds    []uint64
	Duration time.Duration
	Cells    []GridCell
}

// GridCell is one load and outage of a grid, with every client's result.
type GridCell struct {
	Load    float64
	Outage  time.Duration
	Results []GridResult
}

// GridResult is one client's runs of one cell: Availability and LastShare
// (the share served of the calls offered in the last 20 s of the run)
// are means over the seeds; Runs has each seed's stability, in the order of
// Grid.Seeds.
type GridResult struct {
	Availability, LastShare float64
	Runs                    []GridRun
}

// GridRun is one seed's end: whether the run ended stable, and how long
// after the outage's end it became so.
type GridRun struct {
	Stable       bool
	TimeToStable time.Duration
}

// add adds one seed's report, whose outage ended at end, out of n seeds.
func (res *GridResult) add(r *Report, end, duration time.Duration, n int) {
	res.Availability += r.Availability / float64(n)
	res.LastShare += ratio(r.ServedIn(duration-gridTail, duration), offeredSeconds(r, duration-gridTail, duration)) / float64(n)
	_, _, stable, after := recovery([]Interval{{From: end, To: end}}, r.Seconds)
	res.Runs = append(res.Runs, GridRun{Stable: stable, TimeToStable: after})
}

// Stable reports whether every seed's run ended stable, and the longest time
// they took to.
func (res GridResult) Stable() (all bool, longest time.Duration) {
	all = true
	for _, run := range res.Runs {
		all = all && run.Stable
		longest = max(longest, run.TimeToStable)
	}
	return all, longest
}

// GridVerdict is how one client fared against the baseline over a grid.
type GridVerdict struct {
	Client string
	// Cells is the number of cells, Passing those where the client kept the
	// rule, Stuck those where the baseline did not end stable in every seed,
	// and Escaped those of Stuck where the client did.
	Cells, Passing, Stuck, Escaped int
	// Failing lists the cells that did not pass, and why.
	Failing []GridFailure
}

// GridFailure is a cell a client did not pass, and why.
type GridFailure struct {
	Load   float64
	Outage time.Duration
	Why    string
}

// String says which cell failed, and why.
func (f GridFailure) String() string {
	return fmt.Sprintf("load %v, outage %s: %s", f.Load, seconds(f.Outage), f.Why)
}

// Pass reports whether the client passed the grid: every cell, and the
// escapes the rule asks for.
func (v GridVerdict) Pass() bool {
	return v.Passing == v.Cells && v.Escaped >= min(gridEscapes, v.Stuck)
}

// String is the verdict line.
func (v GridVerdict) String() string {
	word := "FAIL"
	if v.Pass() {
		word = "PASS"
	}
	return fmt.Sprintf("%s: %s: %d of %d cells pass; escapes %d of the %d cells where the baseline stays stuck",
		v.Client, word, v.Passing, v.Cells, v.Escaped, v.Stuck)
}

// Judge returns the verdict on client k (an index of Clients, above 0)
// against the baseline, Clients[0].
func (r *GridReport) Judge(k int) GridVerdict {
	v := GridVerdict{Client: r.Clients[k], Cells: len(r.Cells)}
	for _, cell := range r.Cells {
		base, c := cell.Results[0], cell.Results[k]
		why := ""
		if c.Availability < base.Availability-gridSlack {
			why = fmt.Sprintf("availability %.3f against %.3f", c.Availability, base.Availability)
		}
		for i, b := range base.Runs {
			switch run := c.Runs[i]; {
			case !b.Stable:
			case !run.Stable:
				why = fmt.Sprintf("seed %d ends unstable where the baseline recovers", r.Seeds[i])
			case run.TimeToStable > b.TimeToStable+gridLate:
				why = fmt.Sprintf("seed %d stable after %s, the baseline after %s", r.Seeds[i], seconds(run.TimeToStable), seconds(b.TimeToStable))
			}
		}
		if why == "" {
			v.Passing++
		} else {
			v.Failing = append(v.Failing, GridFailure{Load: cell.Load, Outage: cell.Outage, Why: why})
		}
		if all, _ := base.Stable(); !all {
			v.Stuck++
			if all, _ := c.Stable(); all {
				v.Escaped++
			}
		}
	}
	return v
}
