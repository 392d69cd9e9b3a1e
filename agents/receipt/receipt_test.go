package receipt

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/mailbox"
)

// lastReceipt reads the receipt off the last line of an archived log, as
// package mailbox does.
func lastReceipt(t *testing.T, path string) *mailbox.Receipt {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(text), []byte("\n"))
	var p mailbox.Progress
	if err := json.Unmarshal(lines[len(lines)-1], &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if p.Receipt == nil {
		t.Fatalf("%s ends without a receipt", path)
	}
	return p.Receipt
}

// Receipts archived while the data was an untyped object read back whole,
// each value in its field, and a receipt written now for the same outcome
// is the same bytes: nothing is lost, renamed or reordered, so readers of
// either age read both.
func TestReceiptsOfEarlierAgentctlsReadUnchanged(t *testing.T) {
	no := false
	want := map[string]Data{
		"turn-with-errors": {Sent: []string{"msg_05b1ca22906df2303f70e71a"}, Board: []string{"DEMO-1"},
			Parked:      []string{"msg_389a0c96fa399357d33d001a", "msg_a85f223b80d7d5bddccb0652"},
			Carried:     []string{"note-1", "note-2"},
			DriverNotes: []string{"the copy menu was slow; read the reply from the page", "second note"}},
		"deferred":             {Deferred: []string{"DEMO-1"}, Sent: []string{"msg_05b1ca22906df2303f70e71a"}},
		"without-block":        {Carried: []string{"note-1", "note-2"}},
		"block-refused":        {BlockError: "the agentctl block is not a JSON object with send, board and devlog: unexpected EOF"},
		"report":               {Report: &Report{Task: "look", Actions: []string{"looked"}, Status: "in progress"}},
		"waiting-for-approval": {Parked: []string{"msg_436db86e3ad2561f8e52e036"}},
		"by-the-runner":        {Board: []string{"DEMO-1"}, Turn: &no},
		"carried-by-a-turn":    {CarriedBy: "m1"},
		"done":                 {},
		"answered":             {ReplyID: "msg_d62da9e54d85d35b538f87f9", To: "Agent-1"},
		"approved":             {By: "human", Applied: []string{`approved: send msg_held_0 to Agent-3 (type message, priority normal), subject "held"`}},
		"denied":               {By: "human", Reason: "not now", Notice: "msg_f7dd1b9826a0d32f2215edd0"},
		"dropped":              {Reason: "no reason given", Was: "dead"},
		"forwarded":            {To: "hub"},
		"retried":              {},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "v0", "*"+mailbox.ReceiptSuffix))
	if err != nil || len(files) != len(want) {
		t.Fatalf("fixtures %v (%v), want %d", files, err, len(want))
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), mailbox.ReceiptSuffix)
		t.Run(name, func(t *testing.T) {
			r := lastReceipt(t, path)
			d, err := Read(r)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Encode(d)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, r.Data) {
				t.Errorf("written again, the data differs:\n was %s\n now %s", r.Data, again)
			}

			// The fields a test names hold what it says; those it leaves
			// out are compared as the fixture has them.
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			switch name {
			case "turn-with-errors", "deferred":
				if len(d.Errors) == 0 {
					t.Errorf("errors lost: %+v", d)
				}
				w.Errors = d.Errors
			case "without-block":
				if !strings.Contains(d.NoBlock, "asked for an agentctl block") || len(d.DriverNotes) != 3 {
					t.Errorf("no_block %q, driver notes %q", d.NoBlock, d.DriverNotes)
				}
				w.NoBlock, w.DriverNotes = d.NoBlock, d.DriverNotes
			case "retried":
				if h := d.DeadletterHistory; len(h) != 1 || h[0].Reason != "skipped by a person: stuck" || h[0].DeadletteredAt != "2026-11-26T09:52:30Z" {
					t.Errorf("deadletter history %+v", h)
				}
				w.DeadletterHistory = d.DeadletterHistory
			}
			if !reflect.DeepEqual(d, w) {
				t.Errorf("read\n %+v\nwant\n %+v", d, w)
			}
		})
	}
}

// An empty account is no data at all, as an empty untyped object was.
func TestEncodeOfNothingIsNoData(t *testing.T) {
	data, err := Encode(Data{})
	if err != nil || data != nil {
		t.Errorf("Encode(Data{}) = %q, %v; want nil", data, err)
	}
	for _, r := range []*mailbox.Receipt{nil, {}, {Data: json.RawMessage("null")}} {
		if d, err := Read(r); err != nil || !reflect.DeepEqual(d, Data{}) {
			t.Errorf("Read(%+v) = %+v, %v", r, d, err)
		}
	}
}

// A value of a shape no agentctl wrote (a receipt edited by hand) counts
// as missing, as it did for the untyped readers, and the error names it;
// the rest still reads, and nothing half-read is kept.
func TestReadLeavesOutWhatNoAgentctlWrote(t *testing.T) {
	r := &mailbox.Receipt{ID: "m1", Data: json.RawMessage(`{"sent": ["m2"], "errors": ["kept?", 3], "turn": "no", "by": "human", "mood": "fine"}`)}
	d, err := Read(r)
	if err == nil || !strings.Contains(err.Error(), "left out: errors, turn") {
		t.Errorf("error %v, want one naming errors and turn", err)
	}
	want := Data{Sent: []string{"m2"}, By: "human"}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("read %+v, want %+v", d, want)
	}
	if _, err := Read(&mailbox.Receipt{ID: "m1", Data: json.RawMessage(`["not", "an", "object"]`)}); err == nil {
		t.Error("data that is no object read without an error")
	}
}
