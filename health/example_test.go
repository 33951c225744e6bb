package health_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// A registry serves the state of the breakers and budgets registered with
// it as JSON. Here a breaker isolated by hand, beside its budget.
func ExampleRegistry() {
	brk, err := breaker.New(breaker.Config{Name: "payments"})
	if err != nil {
		panic(err)
	}
	funds, err := budget.New(budget.Config{Name: "payments", Capacity: 10})
	if err != nil {
		panic(err)
	}
	brk.Isolate()

	var deps health.Registry
	deps.Add(health.Of("payments", brk, funds))
	w := httptest.NewRecorder()
	deps.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/debug/dependencies", nil))
	fmt.Print(w.Body.String())
	// Output:
	// {"dependencies":[{"name":"payments","breaker":{"state":"isolated","pressure":1,"normal_latency_seconds":null,"normal_failure_rate":null,"trips":0},"budget":{"tokens":10,"capacity":10,"utilization":0}}]}
}
