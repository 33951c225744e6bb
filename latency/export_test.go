package latency

// The defaults, for the tests of package latency_test.
const (
	MaxSlices = maxSlices
)
