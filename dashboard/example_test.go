package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// A dashboard of a health registry, mounted on a path that ends in a
// slash: its page, and the same state as JSON. Here a breaker isolated by
// hand; Observe, set as the breaker's hook, saw the transition.
func Example() {
	var deps health.Registry
	dash, err := dashboard.New(dashboard.Config{Registry: &deps})
	if err != nil {
		panic(err)
	}
	defer dash.Close()
	brk, err := breaker.New(breaker.Config{Name: "payments", OnEvent: dash.Observe})
	if err != nil {
		panic(err)
	}
	deps.Add(health.Of("payments", brk, nil))
	mux := http.NewServeMux()
	mux.Handle("GET /debug/dashboard/", dash)

	brk.Isolate()
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/debug/dashboard/state.json", nil))
	var state struct {
		Dependencies []struct {
			Name        string
			Breaker     struct{ State string }
			Transitions []struct{ From, To, Cause string }
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &state); err != nil {
		panic(err)
	}
	for _, d := range state.Dependencies {
		fmt.Println(d.Name, d.Breaker.State, d.Transitions)
	}
	// Output:
	// payments isolated [{closed isolated isolated}]
}
