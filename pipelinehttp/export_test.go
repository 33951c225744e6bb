package pipelinehttp

// The defaults, for the tests of package pipelinehttp_test.
const (
	MinMedianSamples = minMedianSamples
)
