// Package downstream holds no code of its own: it is a separate module that
// uses github.com/resilience-go/pipeline exactly as an outside user would,
// through its exported API only, to prove that HTTP responses survive the
// pipeline. Its tests send real requests to loopback servers through the
// recommended stages (timeout -> retry -> breaker -> hedge) with the user's glue
// for *http.Response (a classifier, Release, WhenReleased and Describe), and
// check that every body the caller gets is complete and readable after Execute
// returns, that every response the pipeline discards is closed exactly once,
// and that no connection or goroutine outlives the calls.
package downstream
