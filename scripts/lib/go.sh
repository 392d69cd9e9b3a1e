# shellcheck shell=bash
# The Go that agentctl is built, checked and tested with: the one named by
# go.mod's toolchain line, whose standard library has the security fixes
# govulncheck asks for. A go command left to GOTOOLCHAIN=auto takes it
# from go.mod by itself; one set to local (as some machines' Go is) would
# use whatever Go it is, so the scripts name it. The go command fetches
# that toolchain from the Go module proxy once and keeps it in the module
# cache. Sourced from the repository's root by the scripts that run go.
GOTOOLCHAIN=$(sed -n 's/^toolchain //p' go.mod)
export GOTOOLCHAIN
