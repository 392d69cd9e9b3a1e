// Command agentctl-full is agentctl with every command in it: 'agentctl',
// which has only the quick ones (package cli), hands the others over to
// it, and 'agentctl up' starts its runners with it. Run 'agentctl', not
// this program: it says 'agentctl' in everything it prints. It never
// links the NATS server, which agentctl-hub alone carries (deps_test.go).
package main

import (
	"io"
	"os"
	"time"

	"runtime/debug"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/cursor"
)

func main() {
	// Before anything else: agentctl re-executed as a turn's guard runs
	// only that.
	cursor.GuardMain(guardProgram())
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// program adds this program's commands to package cli's table: every
// command the table has without a Run.
var program = cli.Program{Full: map[string]cli.Command{
	"init":      {Usage: initUsage, Run: runInit},
	"calibrate": {Usage: calibrateUsage, Run: runCalibrate},
	"cursor":    {Usage: cursorUsage, Run: runCursor},
	"prompt":    {Usage: promptUsage, Run: runPrompt},
	"doctor":    {Usage: doctorUsage, Run: runDoctor},
	"inbox":     {Usage: inboxUsage, Run: runInbox},
	"reply":     {Usage: replyUsage, Run: runReply},
	"approve":   {Usage: approveUsage, Run: runApprove},
	"deny":      {Usage: denyUsage, Run: runDeny},
	"run":       {Usage: runUsage, Run: runRun},
	"hub":       {Usage: hubUsage, Run: runHub},
	"up":        {Usage: upUsage, Run: runUp},
	"down":      {Usage: downUsage, Run: runDown},
	"service":   {Usage: serviceUsage, Run: runService},
	"skip":      {Usage: skipUsage, Run: runSkip},
	"retry":     {Usage: retryUsage, Run: runRetry},
	"drop":      {Usage: dropUsage, Run: runDrop},
	"serve":     {Usage: serveUsage, Run: runServe},
	"top":       {Usage: topUsage, Run: runTop},
	"reconcile": {Usage: reconcileUsage, Run: runReconcile},
	"tail":      {Usage: tailUsage, Run: runTail},
	"devlog":    {Usage: devlogUsage, Run: runDevlog},
	"mcp":       {Usage: mcpUsage, Run: runMCP},
	"lore":      {Usage: loreUsage, Run: runLore},
	"migrate":   {Usage: migrateUsage, Run: runMigrate},
}}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program.Main(args, stdin, stdout, stderr)
}

// settledAfter is when a runner is past its start-up.
const settledAfter = 5 * time.Second

// idleForDays lets go, once start-up is over, of the program's pages that
// only start-up needed (releaseProgramPages): there is a runner for every
// agent, and it idles for days. Only runners do: mapping the pages back
// stalls a process for a moment, which the hub's NATS servers, electing
// their leaders on short timeouts, were seen not to take well on a loaded
// machine.
func idleForDays() {
	time.AfterFunc(settledAfter, func() {
		debug.FreeOSMemory()
		releaseProgramPages()
	})
}
