package mailbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox/dreamos"
)

const samplesDir = "../fixtures/dreamos-samples"

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(samplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sampleName strips the repository prefix the samples carry, leaving the
// file name the old system gave the message.
func sampleName(name string) string {
	parts := strings.Split(name, "__")
	return parts[len(parts)-1]
}

func TestDecodeDreamOSSamples(t *testing.T) {
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		file                  string
		id, from, to, subject string
		typ                   string
		prio                  Priority
		created               string
		bodyHas, taskID       string
	}{
		{file: "agentcellphone__agent_workspaces__Agent-1__inbox__2025-07-02T07-50-01_agent-2_to_agent-1.json",
			id: "2025-07-02T07-50-01_agent-2_to_agent-1", from: "agent-2", to: "agent-1", typ: "message", prio: Normal,
			created: "2025-07-02T07:50:01.891911Z", bodyHas: "Ready to coordinate?"},
		{file: "agentcellphone__agent_workspaces__Agent-1__inbox__msg_20250811_104104_Agent-5_to_Agent-1.json",
			from: "Agent-5", to: "Agent-1", typ: "task", prio: Normal, subject: "contract: docs-survey-osrs-apis-and-automation-tools-for-screen-capture-input-and-data-extraction",
			created: "2025-08-11T15:41:04.7764221Z", bodyHas: "Survey OSRS APIs", taskID: "docs-survey-osrs-apis-and-automation-tools-for-screen-capture-input-and-data-extraction"},
		{file: "victoros__runtime__agent_comms__agent_mailboxes__Agent-1__agent8_autonomy_query_20231116T110000Z.json",
			id: "agent8_autonomy_query_20231116T110000Z", from: "Agent-8", to: "Agent-1", typ: "query", prio: Normal,
			subject: "Request for Clarification: Maintaining Autonomy under Inbox-Centric Protocol", created: "2023-11-16T11:00:00Z",
			bodyHas: "Agent 1, greetings."},
		{file: "victoros__runtime__agent_comms__archive__20250428T224057Z_THEA_ALL.msg",
			from: "THEA", to: "Agent-1", typ: "directive", prio: Normal, subject: "MANDATORY: Manual Status Reporting Protocol (Temporary)",
			created: "2025-04-28T22:40:57Z", bodyHas: "persistent file lock/permission errors"},
		{file: "agentcellphone__runtime__agent_comms__inbox__response_1755248908737_Agent-1.json",
			from: "Agent-1", to: "Agent-5", typ: "agent_response", prio: Normal, created: "2025-08-15T04:08:28Z",
			bodyHas: "Commit Message: feat: implement user authentication"},
		{file: "victor-dreamos__agent_workspaces__Agent-1__inbox__CAPTAIN_MESSAGE_2025-12-02T10-48-52-968834_msg_20251202_104852_6def4a.md",
			id: "msg_20251202_104852_6def4a", from: "Agent-4", to: "Agent-1", typ: "message", prio: Urgent,
			subject: "🚨 CAPTAIN MESSAGE - JET FUEL", created: "2025-12-02T10:48:52.968834Z", bodyHas: "AUTONOMOUS MODE ACTIVATED"},
		{file: "victor-dreamos__agent_workspaces__Agent-1__inbox__INBOX_MESSAGE_20251206_063526_041170_4a9687d0.md",
			from: "CAPTAIN", to: "Agent-1", typ: "text", prio: Normal, subject: "🚨 INBOX MESSAGE - TEXT",
			created: "2025-12-06T06:35:26.04117Z", bodyHas: "STATUS CONFIRMED - Phase 2 complete"},
		{file: "victor-dreamos__agent_workspaces__archive__invalid_workspaces__Agent_INBOX_MESSAGE_20251206_081844_899125_1fe934c2.md",
			from: "DISCORD", to: "Agent", typ: "text", prio: Normal, subject: "🚨 INBOX MESSAGE - TEXT",
			created: "2025-12-06T08:18:44.899125Z", bodyHas: "1 wat are u working on"},
	}
	for _, tt := range tests {
		t.Run(sampleName(tt.file), func(t *testing.T) {
			src := Source{Name: sampleName(tt.file), ModTime: mod, Owner: "Agent-1"}
			m, err := Decode(readSample(t, tt.file), src)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if tt.id != "" && m.ID != tt.id {
				t.Errorf("id = %q, want %q", m.ID, tt.id)
			}
			if m.ID == "" {
				t.Error("empty id")
			}
			check := func(field, got, want string) {
				if got != want {
					t.Errorf("%s = %q, want %q", field, got, want)
				}
			}
			check("from", m.From, tt.from)
			check("to", m.To, tt.to)
			check("type", m.Type, tt.typ)
			check("priority", string(m.Priority), string(tt.prio))
			check("subject", m.Subject, tt.subject)
			check("task_id", m.TaskID, tt.taskID)
			check("created_at", m.CreatedAt.Format(time.RFC3339Nano), tt.created)
			if !strings.Contains(m.Body, tt.bodyHas) {
				t.Errorf("body does not contain %q:\n%s", tt.bodyHas, m.Body)
			}
			again, err := Decode(readSample(t, tt.file), src)
			if err != nil || again.ID != m.ID {
				t.Errorf("decoding twice gave ids %q and %q (%v)", m.ID, again.ID, err)
			}
		})
	}
}

// The queue entries of the corrupted Dream.OS queue wrap each message; the
// file itself is an array followed by a stale tail and is not one message.
func TestDecodeCorruptedQueue(t *testing.T) {
	data := readSample(t, "victor-dreamos__ops__messaging__message_queue__queue_20251130_025028_corrupted.json")
	if _, err := Decode(data, Source{Name: "queue.json", Owner: "Agent-4"}); err == nil {
		t.Fatal("Decode of the corrupted queue succeeded")
	}
	entries, tail, err := dreamos.InboxJSONEntries(data)
	if err != nil {
		t.Fatal(err)
	}
	if tail == 0 {
		t.Error("the stale tail was not noticed")
	}
	if len(entries) < 90 {
		t.Fatalf("salvaged %d entries, want about 99", len(entries))
	}
	m, err := Decode(entries[0], Source{Name: "queue.json[0]", Owner: "Agent-4"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "72b209a9-1ce3-42e2-ab61-fcecb4f2c0c8" || m.From != "DISCORD" || m.To != "Agent-4" || !strings.HasPrefix(m.Body, "how many loops") {
		t.Errorf("queue entry decoded as %+v", m)
	}
}

func TestDecodeRefusals(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"empty.json", "", "empty"},
		{"blank.json", " \n\t", "empty"},
		{"trunc.json", `{"from": "Agent-2", "body": "hel`, "ends early"},
		{"binary.json", "\x00\xff\xfe\x01", "not UTF-8"},
		{"array.json", `[1, 2]`, "not an object"},
		{"nobody.json", `{"from": "a"}`, "neither a body nor a subject"},
		{"claim.json", string(readSample(t, "victoros__runtime__agent_comms__agent_mailboxes__Agent-1__claim.json")), "not a JSON message object"},
		{"tail.json", `{"body": "x"} {"body": "y"}`, "unexpected data after byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.data), Source{Name: tt.name, Owner: "Agent-1"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeCanonicalRoundTrip(t *testing.T) {
	after := time.Date(2026, 11, 21, 21, 0, 0, 0, time.UTC)
	in := Message{ID: "msg_1", From: "Agent-1", To: "Agent-3", Type: "task", Priority: High, Subject: "s",
		Body: "line 1\r\n\tline 2 ✅", CreatedAt: time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC), ReplyTo: "r", ThreadID: "t",
		TaskID: "T-1", RequiresAck: true, DeliverAfter: &after, Attempts: 2, LastError: "boom", Meta: map[string]any{"k": "v"}}
	out, err := Decode(in.Encode(), Source{Name: "msg_1.json", Owner: "Agent-3"})
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Encode()) != string(in.Encode()) {
		t.Errorf("round trip changed the message:\n%s\nwant\n%s", out.Encode(), in.Encode())
	}
}

// Numbered Dream.OS messages keep their number as their id.
func TestDecodeKeepsNumericIDs(t *testing.T) {
	for data, want := range map[string]string{
		`{"id": 42, "body": "x"}`:                            "42",
		`{"message_id": -7, "body": "x"}`:                    "-7",
		`{"id": 12345678901234567890123, "body": "x"}`:       "12345678901234567890123",
		`{"queue_id": 9, "message": {"body": "x"}}`:          "9",
		`{"queue_id": 9, "message": {"id": 3, "body": "x"}}`: "3",
	} {
		m, err := Decode([]byte(data), Source{Name: "m.json", Owner: "Agent-1"})
		if err != nil || m.ID != want {
			t.Errorf("Decode(%s) id = %q, %v; want %q", data, m.ID, err, want)
		}
	}
}
