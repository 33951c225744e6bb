package timeout

// The defaults, for the tests of package timeout_test.
const (
	DefaultGrace = defaultGrace
)
