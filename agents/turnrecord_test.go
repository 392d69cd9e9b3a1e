package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// journalV0 holds progress logs as runners of version 0 wrote them (see
// its README).
var journalV0 = filepath.Join("testdata", "journal-v0")

// lastRecord is the last line of a progress log, decoded.
func lastRecord(t *testing.T, path string) mailbox.Progress {
	t.Helper()
	lines := logLines(t, path)
	var p mailbox.Progress
	if err := json.Unmarshal(lines[len(lines)-1], &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func logLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
}

func ptr[T any](v T) *T { return &v }

// sortedList is a list of a receipt's data, in order: effects recorded
// apart are listed in no particular order.
func sortedList(list []string) string {
	out := slices.Clone(list)
	slices.Sort(out)
	return fmt.Sprint(out)
}

// An untyped record of an earlier runner reads back whole: every key it
// wrote, with numbers that came back as float64 and objects as maps.
func TestReadTurnReadsAnEarlierRunnersRecord(t *testing.T) {
	p := lastRecord(t, filepath.Join(journalV0, "effects.progress.jsonl"))
	if p.Version != 0 {
		t.Fatalf("the fixture has version %d, want none", p.Version)
	}
	got, err := readTurn(p)
	if err != nil {
		t.Fatal(err)
	}
	want := turnRecord{
		Notes:       []string{"note-1", "note-2"},
		AsksBlock:   ptr(true),
		Child:       &cursor.Child{PID: 5121, PGID: 5121, StartTime: 123456789},
		ResumeState: `{"count":3,"last":"abc"}`,
		PromptBytes: 1351,
		DriverNotes: []string{"the copy menu was slow; read the reply from the page", "second note"},
		Owners:      owners{"DEMO-1": "Agent-1", "DEMO-2": "human"},
		Effects:     []string{"refused", "board/0", "board/2", "park/send/send[1]", "park/board/board[1]", "devlog/done"},
	}
	if got.Reply == nil || !strings.HasPrefix(*got.Reply, "Working on it.\n") {
		t.Errorf("reply %v, want the one on record", got.Reply)
	}
	if len(got.Results) != 6 || got.Results["board/2"].Kind != "failed" || got.Results["park/send/send[1]"].ID != "msg_389a0c96fa399357d33d001a" ||
		got.Results["refused"].Detail != "send[2]: refused: the reply's messages 4 to 4, past the first 3 (guardrails.many_sends: deny)" {
		t.Errorf("results %+v, want the six on record", got.Results)
	}
	got.Reply, got.Results = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read\n%+v\nwant\n%+v", got, want)
	}
}

// Each key of an untyped record is read the way the runners that wrote it
// read it: a value of another shape counts as missing, lists keep their
// strings, and an undecodable result is left out; presence still counts
// where it did (asks_block, an empty owners map, an empty reply).
func TestReadTurnReadsUntypedValuesAsBefore(t *testing.T) {
	for _, c := range []struct {
		data string
		want turnRecord
	}{
		{`{"notes": ["a", 3, null, "b"], "effects": "x", "driver_notes": [1]}`,
			turnRecord{Notes: []string{"a", "b"}, DriverNotes: []string{}}},
		{`{"asks_block": "yes", "took": 1, "by_runner": true, "prompt_bytes": 12.0, "reply": 5, "resume_state": {}}`,
			turnRecord{AsksBlock: ptr(false), ByRunner: true, PromptBytes: 12}},
		{`{"owners": {"T-1": "a", "T-2": 7}, "results": {"k": {"kind": "sent", "id": "m"}, "bad": {"kind": 5}}}`,
			turnRecord{Owners: owners{"T-1": "a"}, Results: map[string]result{"k": {Kind: "sent", ID: "m"}}}},
		{`{"owners": {}, "reply": "", "asks_block": false, "notes": []}`,
			turnRecord{Owners: owners{}, Reply: ptr(""), AsksBlock: ptr(false), Notes: []string{}}},
		{`{"child": null, "owners": [], "results": 3}`, turnRecord{}},
		{`{}`, turnRecord{}},
	} {
		got, err := readTurn(mailbox.Progress{Data: json.RawMessage(c.data)})
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s read as %+v, %v; want %+v", c.data, got, err, c.want)
		}
	}
	for _, data := range []string{`{"child": "pid 12"}`, `{"child": {"pid": "12"}}`, `[1]`, `"x"`} {
		if _, err := readTurn(mailbox.Progress{Data: json.RawMessage(data)}); err == nil {
			t.Errorf("%s read without an error", data)
		}
	}
}

// A record in the current shape reads back as it was, and reads the same
// the way an earlier runner reads its untyped record: keys and value
// shapes did not change, so a runner of an earlier version resumes it.
func TestTurnRecordRoundTrips(t *testing.T) {
	for _, rec := range []turnRecord{
		{},
		{Took: true, Notes: []string{"n-1"}, AsksBlock: ptr(false), Child: &cursor.Child{PID: 7, PGID: 7, StartTime: 99},
			ResumeState: "{}", PromptBytes: 40, DriverNotes: []string{"slow"}, Reply: ptr(""), ByRunner: true,
			Owners: owners{}, Effects: []string{"ack", "board/0"}, Results: map[string]result{"ack": {Kind: "ack"}, "board/0": {Kind: "board", ID: "T-1", What: "set"}}},
		{AsksBlock: ptr(true), Owners: owners{"T-1": ownerUnread}, Reply: ptr("hi")},
	} {
		cl := &claim{Claim: &mailbox.Claim{Message: mailbox.Message{ID: "m"}}, turn: rec}
		if err := cl.save(); err != nil {
			t.Fatal(err)
		}
		if cl.Progress.Version != turnVersion {
			t.Errorf("saved with version %d, want %d", cl.Progress.Version, turnVersion)
		}
		got, err := readTurn(cl.Progress)
		if err != nil || !reflect.DeepEqual(got, rec) {
			t.Errorf("%s read back as %+v, %v; want %+v", cl.Progress.Data, got, err, rec)
		}
		if old, err := readUntypedTurn(cl.Progress.Data); err != nil || !reflect.DeepEqual(old, rec) {
			t.Errorf("%s read by an earlier runner as %+v, %v; want %+v", cl.Progress.Data, old, err, rec)
		}
	}
}

// A record of a version this runner does not know is neither guessed at
// nor overwritten: a newer one stops the runner, with the claim left as it
// was; one of the current version whose values have other types is
// unreadable.
func TestReadTurnRefusesWhatItCannotKnow(t *testing.T) {
	var newer *newerTurnError
	if _, err := readTurn(mailbox.Progress{Version: turnVersion + 1, Data: json.RawMessage(`{"took": true}`)}); !errors.As(err, &newer) {
		t.Errorf("a newer record: %v, want a newerTurnError", err)
	}
	for _, p := range []mailbox.Progress{
		{Version: -1, Data: json.RawMessage(`{}`)},
		{Version: turnVersion, Data: json.RawMessage(`{"took": "yes"}`)},
		{Version: turnVersion, Data: json.RawMessage(`{"results": {"k": {"kind": 5}}}`)},
	} {
		if _, err := readTurn(p); err == nil || errors.As(err, &newer) {
			t.Errorf("version %d %s: %v, want it unreadable", p.Version, p.Data, err)
		}
	}
}

// placeJournal leaves message m1 in Agent-1's processing/ with the progress
// log journal, as a runner that stopped there left it.
func placeJournal(t *testing.T, root, journal string) string {
	t.Helper()
	processing := filepath.Join(mailbox.Dir(root, "Agent-1"), mailbox.ProcessingDir)
	for src, dst := range map[string]string{"m1.json": "m1.json", journal: "m1" + mailbox.ProgressSuffix} {
		data, err := os.ReadFile(filepath.Join(journalV0, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(processing, dst), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(journalV0, journal)
}

// archivedJournal checks the archived log of m1: the lines of the earlier
// runner kept as they were, the line of the consumer that resumed the claim
// with the record it read, and every line the runner wrote after in the
// current shape, the last one being last.
func archivedJournal(t *testing.T, root, fixture string) turnRecord {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(mailbox.Dir(root, "Agent-1"), mailbox.ArchiveDir, "*", "m1"+mailbox.ReceiptSuffix))
	if len(logs) != 1 {
		t.Fatalf("archived logs of m1: %v", logs)
	}
	lines, old := logLines(t, logs[0]), logLines(t, fixture)
	if len(lines) < len(old)+2 {
		t.Fatalf("the archived log has %d lines, the earlier runner's %d", len(lines), len(old))
	}
	for i := range old {
		if !bytes.Equal(lines[i], old[i]) {
			t.Fatalf("line %d changed:\n%s\nwas\n%s", i+1, lines[i], old[i])
		}
	}
	var last turnRecord
	for i, line := range lines[len(old):] {
		var p mailbox.Progress
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 0 && (p.Version != 0 || p.Stages["resumed"].IsZero()):
			t.Errorf("the line of the resumed claim has version %d, stages %v; want the earlier record, resumed", p.Version, p.Stages)
		case i > 0 && p.Version != turnVersion:
			t.Errorf("line %d has version %d, want %d: %s", len(old)+i+1, p.Version, turnVersion, line)
		case i > 0:
			var rec turnRecord
			dec := json.NewDecoder(bytes.NewReader(p.Data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rec); err != nil {
				t.Errorf("line %d is not in the current shape: %v", len(old)+i+1, err)
			}
			last = rec
		}
	}
	return last
}

// A runner of this version resumes, where it stopped, a claim an earlier
// runner was applying the effects of: its reply is not asked for again,
// the effects on record are not applied again (the boards, the approval
// requests and the devlog are left as they are), the owners it recorded
// still judge the reply, and the rest is applied once.
func TestResumesAnEarlierRunnersJournalDuringEffects(t *testing.T) {
	root := newRuntime(t, demoAgents)
	// Since the earlier runner recorded the owners, DEMO-2 became Agent-1's:
	// judged by the boards now, its close would apply, not wait for
	// approval.
	board := filepath.Join(projectboard.Dir(root), "demo.yaml")
	data, err := os.ReadFile(board)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(board, bytes.Replace(data, []byte("owner: human"), []byte("owner: Agent-1"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		t.Error("the turn was taken again; its reply is on record")
		return "", errors.New("no turn")
	})))
	s.Guardrails = Guardrails{Broadcast: GuardConfirm, CloseUnowned: GuardConfirm, ManySends: GuardDeny, ManySendsOver: 3}
	s.Policy, s.DigestWait = map[string]string{"note": PolicyDigest}, time.Hour
	s.Log = logOnFailure(t)
	for i := 1; i <= 2; i++ {
		deliverTo(t, root, mailbox.Message{ID: fmt.Sprintf("note-%d", i), From: "Agent-2", To: "Agent-1", Type: "note", Body: fmt.Sprintf("FYI %d", i)})
	}
	fixture := placeJournal(t, root, "effects.progress.jsonl")
	startRunner(t, s)
	poll.Until(t, "m1 and its notes to be archived", func() bool { return counts(t, root, "Agent-1").Done == 3 })

	rc := receiptOf(t, root, "Agent-1", "m1")
	if rc.Outcome != "done with errors" || !strings.Contains(fmt.Sprint(rc.Data.Errors), `board NOPE-9: no such task "NOPE-9"`) ||
		sortedList(rc.Data.Parked) != "[msg_389a0c96fa399357d33d001a msg_a85f223b80d7d5bddccb0652]" ||
		fmt.Sprint(rc.Data.Sent) != "[msg_05b1ca22906df2303f70e71a]" || sortedList(rc.Data.Carried) != "[note-1 note-2]" ||
		fmt.Sprint(rc.Data.Board) != "[DEMO-1]" ||
		fmt.Sprint(rc.Data.DriverNotes) != "[the copy menu was slow; read the reply from the page second note]" {
		t.Errorf("receipt %q %v", rc.Outcome, rc.Data)
	}
	if d1, d2 := task(t, root, "DEMO-1"), task(t, root, "DEMO-2"); d1.Status != projectboard.Todo || d2.Status != projectboard.Todo {
		t.Errorf("DEMO-1 %s, DEMO-2 %s; want both as they were: the change of one was on record, the other waits for approval", d1.Status, d2.Status)
	}
	if reqs := approvals(t, root); len(reqs) != 0 {
		t.Errorf("approval requests %v asked for again", reqs)
	}
	if e := devlogOf(t, root, "Agent-1"); len(e) != 0 {
		t.Errorf("devlog entries %+v written again", e)
	}
	if p := pendingOf(t, root, "Agent-2"); len(p) != 1 || p[0].ID != "msg_05b1ca22906df2303f70e71a" {
		t.Errorf("Agent-2's inbox %+v, want the send not on record, once", p)
	}
	if acks := humanPending(t, root, func(m mailbox.Message) bool { return m.Type == "receipt" }); len(acks) != 1 || !strings.Contains(acks[0].Body, "m1") {
		t.Errorf("the sender's receipts %+v, want one for m1", acks)
	}
	for _, id := range []string{"note-1", "note-2"} {
		if r := receiptOf(t, root, "Agent-1", id); r.Outcome != "carried by a turn" || r.Data.CarriedBy != "m1" {
			t.Errorf("%s: receipt %+v, want carried by m1", id, r)
		}
	}
	last := archivedJournal(t, root, fixture)
	// The earlier runner had written the devlog entry; the receipt, which
	// now comes before it, is the first of the rest.
	if want := []string{"refused", "board/0", "board/2", "park/send/send[1]", "park/board/board[1]", "devlog/done",
		"ack", "send/msg_05b1ca22906df2303f70e71a", "note/note-1", "note/note-2"}; !slices.Equal(last.Effects, want) {
		t.Errorf("effects on record %v, want %v", last.Effects, want)
	}
	if len(last.Results) != 10 || last.Owners["DEMO-2"] != "human" || last.Reply == nil {
		t.Errorf("the last record %+v lost what the earlier one held", last)
	}
}

// hookDriver is a driver whose turn is a function of the cursor.Turn it
// is given, hooks and all.
type hookDriver func(cursor.Turn) (string, error)

func (d hookDriver) Run(ctx context.Context, t cursor.Turn) (string, error) { return d(t) }

// A runner of this version resumes a turn an earlier runner submitted and
// stopped waiting on: it does not send the prompt again but resumes it
// with the state the driver recorded, carries the notes on record, keeps
// the driver's notes from before, and judges the reply by the prompt the
// agent saw, whatever the template says now.
func TestResumesAnEarlierRunnersSubmittedTurn(t *testing.T) {
	root := newRuntime(t, demoAgents)
	// The template changed since: it no longer asks for the block.
	if err := os.MkdirAll(filepath.Join(root, "templates"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "templates", "default.tmpl"), []byte("Have a look: {{.Message.Body}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var turns []cursor.Turn
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, hookDriver(func(turn cursor.Turn) (string, error) {
		mu.Lock()
		turns = append(turns, turn)
		mu.Unlock()
		turn.OnNote("third note")
		return "All done; nothing to send.", nil
	})))
	s.Policy, s.DigestWait = map[string]string{"note": PolicyDigest}, time.Hour
	s.Log = logOnFailure(t)
	for i := 1; i <= 2; i++ {
		deliverTo(t, root, mailbox.Message{ID: fmt.Sprintf("note-%d", i), From: "Agent-2", To: "Agent-1", Type: "note", Body: fmt.Sprintf("FYI %d", i)})
	}
	fixture := placeJournal(t, root, "submitted.progress.jsonl")
	startRunner(t, s)
	poll.Until(t, "m1 and its notes to be archived", func() bool { return counts(t, root, "Agent-1").Done == 3 })

	mu.Lock()
	defer mu.Unlock()
	if len(turns) != 1 {
		t.Fatalf("%d turns, want the one resumed", len(turns))
	}
	turn := turns[0]
	if !turn.Resume || turn.ResumeState != `{"count":3,"last":"abc"}` || turn.ID != "m1/1" {
		t.Errorf("turn %q resume %v with state %q; want m1/1 resumed with the recorded state", turn.ID, turn.Resume, turn.ResumeState)
	}
	if !strings.Contains(turn.Prompt, "FYI 1") || !strings.Contains(turn.Prompt, "FYI 2") {
		t.Errorf("the resumed prompt lacks the notes on record:\n%s", turn.Prompt)
	}
	rc := receiptOf(t, root, "Agent-1", "m1")
	if rc.Outcome != "done without block" || sortedList(rc.Data.Carried) != "[note-1 note-2]" ||
		fmt.Sprint(rc.Data.DriverNotes) != "[the copy menu was slow; read the reply from the page second note third note]" {
		t.Errorf("receipt %q %v", rc.Outcome, rc.Data)
	}
	last := archivedJournal(t, root, fixture)
	if last.Child == nil || last.Child.PID != 4194305 || last.PromptBytes != 1351 || !last.asksBlock() || last.Reply == nil {
		t.Errorf("the last record %+v lost what the earlier one held", last)
	}
}

// placeRecord leaves message m1 in Agent-1's processing/, submitted, with
// a progress log of one record of version and data.
func placeRecord(t *testing.T, root string, version int, data string) string {
	t.Helper()
	placeJournal(t, root, "submitted.progress.jsonl")
	at := time.Date(2026, 11, 26, 5, 47, 40, 0, time.UTC)
	line, err := json.Marshal(mailbox.Progress{ID: "m1", Agent: "Agent-1", PID: 1, Host: "vm", ClaimedAt: at, Attempt: 1,
		Stage: stageSubmit, Stages: map[string]time.Time{mailbox.StageClaimed: at, stageSubmit: at}, Version: version, Data: json.RawMessage(data)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(mailbox.Dir(root, "Agent-1"), mailbox.ProcessingDir, "m1"+mailbox.ProgressSuffix)
	if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var noTurn = replyDriver(func(string) (string, error) { return "", errors.New("no turn may be taken") })

// A record this runner cannot read back is not guessed at: what was done
// already is unknown, so nothing is done again and the message is
// dead-lettered with the reason, for a person to decide.
func TestAnUnreadableTurnRecordIsDeadLettered(t *testing.T) {
	root := newRuntime(t, demoAgents)
	placeRecord(t, root, turnVersion, `{"child": {"pid": "x"}}`)
	var turns atomic.Int32
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, hookDriver(func(cursor.Turn) (string, error) {
		turns.Add(1)
		return "", errors.New("no turn may be taken")
	})))
	s.Log = logOnFailure(t)
	startRunner(t, s)
	poll.Until(t, "m1 to be dead-lettered", func() bool { return counts(t, root, "Agent-1").Dead == 1 })
	mb, _ := mailbox.Open(root, "Agent-1")
	dead, err := mb.List(mailbox.StateDead)
	if err != nil || len(dead) != 1 || !strings.Contains(dead[0].Reason, "its progress record cannot be read back") {
		t.Fatalf("dead letters %+v, %v; want m1 with the reason", dead, err)
	}
	if e := devlogOf(t, root, "Agent-1"); len(e) != 1 || e[0].Outcome != "deadletter" {
		t.Errorf("devlog %+v, want the dead letter told once", e)
	}
	if n := counts(t, root, "Agent-1"); n.Processing != 0 || n.Done != 0 || turns.Load() != 0 {
		t.Errorf("counts %+v after %d turns, want m1 dead without one", n, turns.Load())
	}
}

// A record written by a newer agentctl stops the runner with the claim
// left as it is, for that agentctl to finish.
func TestATurnRecordOfANewerVersionStopsTheRunner(t *testing.T) {
	root := newRuntime(t, demoAgents)
	path := placeRecord(t, root, turnVersion+1, `{"took": true, "reply": {"text": "a shape to come"}}`)
	s := testSettings(root, "Agent-1", demoAgents, noTurn)
	s.Log = logOnFailure(t)
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot resume m1: its turn record is of version 2, written by a newer agentctl") {
		t.Fatalf("Run = %v, want it stopped by the newer record", err)
	}
	if n := counts(t, root, "Agent-1"); n.Processing != 1 {
		t.Errorf("counts %+v, want m1 left in processing/", n)
	}
	if p := lastRecord(t, path); p.Version != turnVersion+1 || string(p.Data) != `{"took":true,"reply":{"text":"a shape to come"}}` {
		t.Errorf("the record became version %d %s", p.Version, p.Data)
	}
}
