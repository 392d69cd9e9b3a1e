# shellcheck shell=bash
# What a run that proves the suite requires: the Windows tests under Wine,
# the hub's test on a foreign NATS server, the tests against VS Code's chat
# view (code-server) and against the real agent CLIs, and, as root, the
# runner's tests on a small file system it fills and remounts read-only.
# Without these each such test skips, saying so; with them it fails
# instead. scripts/setup installs all of it. Sourced by .ci/run and
# scripts/soak.
export AGENTCTL_REQUIRE_WINE=1 AGENTCTL_REQUIRE_NATS_SERVER=1 AGENTCTL_REQUIRE_CODE_SERVER=1 \
  AGENTCTL_REQUIRE_AGENT_CLIS=1 AGENTCTL_REQUIRE_FAULT_FS=1
