package ceiling

// The defaults, for the tests of package ceiling_test.
const (
	DefaultMinSamples = defaultMinSamples
	DefaultCap        = defaultCap
	DefaultFloor      = defaultFloor
	DefaultQuantile   = defaultQuantile
)
