// Package wasmguest is the guest side of Sluice's WebAssembly calling
// convention (docs/udf.md) for the test modules the repository builds
// with GOOS=wasip1 (udf/testdata/gofuncs, udf/testdata/tablefuncs,
// testrunner/testdata/ksqlfunctions): the sluice_alloc export the host
// writes arguments through, reading an argument in memory, returning a
// value in memory and signalling NULL. A module importing it exports
// sluice_alloc. It builds only for wasip1; docs/udf.md shows the same
// few lines standalone for a user's module.
package wasmguest
