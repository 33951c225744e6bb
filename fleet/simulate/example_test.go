package simulate_test

import (
	"fmt"

	"github.com/resilience-go/pipeline/fleet/simulate"
)

// A fleet of 20 with one sick process: naive sharing stops every healthy
// process, the quorum none.
func Example() {
	for _, st := range []simulate.Strategy{simulate.Naive, simulate.Quorum} {
		r, err := simulate.Run(simulate.Config{Seed: 1, Processes: 20, Strategy: st, Situation: simulate.SickProcess})
		if err != nil {
			fmt.Println(err)
			return
		}
		stopped := 0
		for i, s := range r.Stops {
			if !r.Reached(i) && s >= 0 {
				stopped++
			}
		}
		fmt.Printf("%s: %d of 19 healthy processes stopped calling, %d of their calls refused\n", st, stopped, r.SparedRefused)
	}
	// Output:
	// naive: 19 of 19 healthy processes stopped calling, 1482 of their calls refused
	// quorum: 0 of 19 healthy processes stopped calling, 0 of their calls refused
}
