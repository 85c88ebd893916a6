// The module root. The requirements live in mod/v<minor>.mod, one file per Kubernetes release line,
// selected with `go build -modfile=mod/v1.37.mod` (the Makefile's E2E_K8S variable); this file is never read.
module kdiagnose.dev/e2e

go 1.26.0
