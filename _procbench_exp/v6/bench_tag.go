//go:build orchhook_bench

package main

// Benchmarks build the binary with -tags orchhook_bench to get test-bump.
func init() { benchCommands = append(benchCommands, testBumpCommand) }
