package shed_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/shed"
)

// A server that trusts the level its mesh peers claim, and serves a
// critical request from anyone else as a default one.
func ExampleConfig_criticality() {
	b, err := bulkhead.New(bulkhead.Config{Name: "api", MaxConcurrent: 64})
	if err != nil {
		panic(err)
	}
	h, err := shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, criticality.From(r.Context()))
	}), shed.Config{
		Limits: []pipeline.Described{b},
		Criticality: func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
			// A peer of the mesh: here, an address of the private network;
			// in production, the identity of its client certificate.
			if a, err := netip.ParseAddrPort(r.RemoteAddr); err == nil && a.Addr().IsPrivate() {
				return claimed
			}
			return min(claimed, criticality.Default)
		},
	})
	if err != nil {
		panic(err)
	}
	for _, from := range []string{"10.0.0.7:5000", "203.0.113.9:5000"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = from
		r.Header.Set(pipelinehttp.CriticalityHeader, "critical")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Print(from, ": ", w.Body.String())
	}
	// Output:
	// 10.0.0.7:5000: critical
	// 203.0.113.9:5000: default
}

// A service that runs no limit reads its caller's level all the same, and
// passes it on with the request's context to the service it calls.
func ExampleCriticality() {
	next := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("the next hop hears:", r.Header.Get(pipelinehttp.CriticalityHeader))
	}))
	defer next.Close()
	client := &http.Client{Transport: pipelinehttp.NewTransport(nil)}
	defer client.CloseIdleConnections()

	h := shed.Criticality(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, next.URL, nil)
		if err != nil {
			panic(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = resp.Body.Close()
	}), nil) // nil: the caller's claim is trusted

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set(pipelinehttp.CriticalityHeader, "sheddable")
	h.ServeHTTP(httptest.NewRecorder(), r)
	// Output: the next hop hears: sheddable
}
