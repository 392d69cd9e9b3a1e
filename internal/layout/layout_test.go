package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The paths are the on-disk contract people and Dream.OS tools rely on:
// each is checked against its spelling, not against the code that builds it.
func TestPathsKeepTheirNames(t *testing.T) {
	root := filepath.FromSlash("/srv/runtime")
	a, err := For(root, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	session, _ := SessionFile(Sessions(root), "Agent-3")
	raw, _ := RawOutput(Sessions(root), "Agent-3")
	logFile, _ := ServiceLog(root, "up")
	notified, _ := Notified(root, "human")
	for got, want := range map[string]string{
		Config(root):                      "agentctl.yaml",
		Mailboxes(root):                   "agent_mailboxes",
		a.Mailbox():                       "agent_mailboxes/Agent-3",
		a.InMailbox(InboxJSON):            "agent_mailboxes/Agent-3/inbox.json",
		a.InMailbox(InboxJSONLock):        "agent_mailboxes/Agent-3/inbox.json.lock",
		a.InMailbox(InboxDir):             "agent_mailboxes/Agent-3/inbox",
		a.InMailbox(ProcessingDir):        "agent_mailboxes/Agent-3/processing",
		a.InMailbox(ArchiveDir):           "agent_mailboxes/Agent-3/archive",
		a.InMailbox(DeadletterDir):        "agent_mailboxes/Agent-3/deadletter",
		a.InMailbox(StatusJSON):           "agent_mailboxes/Agent-3/status.json",
		a.InMailbox(SeenDir):              "agent_mailboxes/Agent-3/.seen",
		a.InMailbox(IngestDir):            "agent_mailboxes/Agent-3/.ingest",
		a.Devlog():                        "devlogs/Agent-3.md",
		MigratedDevlogs(root):             "devlogs/dreamos",
		Boards(root):                      "project_board",
		BoardsDeferred(root):              "project_board/.deferred",
		a.InMailbox(OffsetsDir):           "agent_mailboxes/Agent-3/.offsets",
		LoreDay(root, "2026-11-26"):       "lore/2026-11-26.md",
		LoreDictionary(root):              "lore/dictionary.yaml",
		LoreTemplate(root):                "lore/template.md.tmpl",
		Locks(root):                       "locks",
		a.ConsumerLock():                  "locks/Agent-3.consumer.lock",
		a.SendKeysLock():                  "locks/Agent-3.mcp-keys.lock",
		a.SendKeys():                      "mcp/Agent-3/keys",
		BoardsLock(root):                  "locks/project_board.lock",
		DesktopLock(Locks(root), "x11_0"): "locks/desktop-x11_0.lock",
		SupervisorLock(root):              "locks/up.lock",
		SupervisorStop(root):              "locks/up.stop",
		Audit(root):                       "audit",
		session:                           "sessions/Agent-3.json",
		raw:                               "sessions/Agent-3.raw",
		a.Journal():                       "seats/Agent-3",
		filepath.Join(root, filepath.FromSlash(HubStore)): "hub/jetstream",
		HubSeats(root):                            "hub/seats.json",
		HubUndeliverable(root):                    "hub/undeliverable",
		a.CursorHome():                            "cursor/Agent-3",
		a.CursorProfile():                         "cursor/Agent-3/profile",
		a.CursorLaunchLog():                       "cursor/Agent-3/launch.log",
		MigratedDocuments(root):                   "dreamos/documents",
		MigratedLore(root):                        "lore/dreamos",
		HubUndeliverableMessage(root, "17"):       "hub/undeliverable/17.json",
		HubUndeliverableReason(root, "17"):        "hub/undeliverable/17.reason.txt",
		notified:                                  "notified/human",
		filepath.Join(Boards(root), DefaultBoard): "project_board/board.yaml",
		a.InMailbox(WatchedDir):                   "agent_mailboxes/Agent-3/.watched",
		a.InMailbox(SkipJSON):                     "agent_mailboxes/Agent-3/skip.json",
		a.Worktree():                              "worktrees/Agent-3",
		Costs(root):                               "costs",
		HubCredentials(root):                      "hub/credentials",
		HubOwnSeed(root):                          "hub/credentials/_hub.nk",
		HubMachineSeed(root, "box-1"):             "hub/credentials/box-1.nk",
		HubLock(root):                             "locks/hub.lock",
		a.ByHandLock():                            "locks/Agent-3.by-hand.lock",
		a.Workspace():                             "workspaces/Agent-3",
		logFile:                                   "logs/up.log",
		Token(root):                               "mission-control.token",
	} {
		if w := filepath.Join(root, filepath.FromSlash(want)); got != w {
			t.Errorf("got %s, want %s", got, w)
		}
	}
	if HubSeatsFile != "hub/seats.json" {
		t.Errorf("HubSeatsFile = %s", HubSeatsFile)
	}
	for _, c := range [][2]string{
		{MessageSuffix, ".json"}, {RecordSuffix, ".json"}, {DaySuffix, ".jsonl"}, {BoardSuffix, ".yaml"},
		{DevlogSuffix, ".md"}, {TemplateSuffix, ".tmpl"}, {OutputSuffix, ".txt"}, {WithdrawingSuffix, ".withdrawing"},
		{ProgressSuffix, ".progress.jsonl"}, {ReceiptSuffix, ".receipt.jsonl"}, {ReasonSuffix, ".reason.txt"},
		{AppliedSuffix, ".applied"}, {DroppedSuffix, ".dropped"}, {UnreadableSuffix, ".unreadable"},
	} {
		if c[0] != c[1] {
			t.Errorf("a suffix is %q, want %q", c[0], c[1])
		}
	}
	if g, _ := filepath.Match(DesktopLockHolders(Locks(root)), filepath.Join(root, "locks", "desktop-x11_0.lock.holder")); !g {
		t.Error("DesktopLockHolders does not match a holder record")
	}
}

// A name that could leave its folder never becomes a path.
func TestInvalidNamesAreRefused(t *testing.T) {
	for _, name := range []string{"", "..", "../etc", "a/b", `a\b`, ".hidden", "Agent 3", "-x"} {
		if _, err := For("/r", name); err == nil {
			t.Errorf("For accepted %q", name)
		}
		if _, err := SessionFile("/r", name); err == nil {
			t.Errorf("SessionFile accepted %q", name)
		}
		if _, err := RawOutput("/r", name); err == nil {
			t.Errorf("RawOutput accepted %q", name)
		}
		if _, err := ServiceLog("/r", name); err == nil {
			t.Errorf("ServiceLog accepted %q", name)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MustFor accepted %q", name)
				}
			}()
			MustFor("/r", name)
		}()
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MustPath accepted %q", name)
				}
			}()
			MustPath(SessionFile("/r", name))
		}()
	}
}

// The package doc is the one list of the tree: every name the package
// declares appears in it.
func TestDocListsEveryName(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "layout.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || vs.Names[0].Name == "DayFormat" || vs.Names[0].Name == "LockSuffix" {
				continue
			}
			name, _ := strconv.Unquote(lit.Value)
			if !strings.Contains(doc, name) {
				t.Errorf("the package doc does not list %s (%s)", name, vs.Names[0].Name)
			}
		}
	}
}
