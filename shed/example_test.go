package shed_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/shed"
)

// A handler behind a bulkhead of one: a request that arrives while another is
// inside is answered 503 with a Retry-After.
func Example() {
	b, err := bulkhead.New(bulkhead.Config{Name: "api", MaxConcurrent: 1})
	if err != nil {
		panic(err)
	}
	var h http.Handler
	h, err = shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A second request while this one holds the only slot.
		inner := httptest.NewRecorder()
		h.ServeHTTP(inner, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Println("inner:", inner.Code, inner.Header().Get("Retry-After"))
		fmt.Fprint(w, "done")
	}), shed.Config{Limits: []pipeline.Described{b}})
	if err != nil {
		panic(err)
	}
	outer := httptest.NewRecorder()
	h.ServeHTTP(outer, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Println("outer:", outer.Code, outer.Body.String())
	// Output:
	// inner: 503 1
	// outer: 200 done
}
