// Package grpcbench holds the gRPC client's benchmarks beside failsafe-go's
// failsafegrpc interceptor: in the benchmark module, so that neither
// failsafe-go nor this comparison reaches the module graph of a user of the
// gRPC module. docs/grpc.md gives the figures and the commands.
package grpcbench
