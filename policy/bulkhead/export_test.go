package bulkhead

// The defaults, for the tests of package bulkhead_test.
const (
	DefaultMaxWait = defaultMaxWait
)
