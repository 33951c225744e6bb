package retry

// The backoffs' defaults, for the tests of package retry_test.
const (
	DefaultBase          = defaultBase
	DefaultThrottledBase = defaultThrottledBase
	DefaultMaxDelay      = defaultMaxDelay
)
