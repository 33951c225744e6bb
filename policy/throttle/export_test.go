package throttle

// The defaults, for the tests of package throttle_test.
const (
	DefaultMaxRejection = defaultMaxRejection
	MaxBuckets          = maxBuckets
)
