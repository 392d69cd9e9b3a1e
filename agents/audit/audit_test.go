package audit

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestConcurrentAppendsStayWhole: records appended at once by many
// processes are each one whole line, none lost.
func TestConcurrentAppendsStayWhole(t *testing.T) {
	if os.Getenv("AUDIT_CHILD") != "" {
		n, _ := strconv.Atoi(os.Getenv("AUDIT_CHILD"))
		for i := range 200 {
			if err := Append(os.Getenv("AUDIT_ROOT"), Record{Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
				Agent: fmt.Sprintf("Agent-%d", n), MessageID: fmt.Sprintf("m%d", i), Kind: "send", What: string(make([]byte, 3000)), Verdict: Applied}); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	root := t.TempDir()
	var wg sync.WaitGroup
	for n := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentAppendsStayWhole$")
			cmd.Env = append(os.Environ(), "AUDIT_CHILD="+strconv.Itoa(n), "AUDIT_ROOT="+root)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child %d: %v\n%s", n, err, out)
			}
		}()
	}
	wg.Wait()
	recs, err := Read(root, time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 800 {
		t.Fatalf("%d records read back, want 800", len(recs))
	}
	st, err := os.Stat(Path(root, recs[0].Time))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o002 != 0 {
		t.Errorf("the audit log is writable by others: %v", st.Mode())
	}
}

func TestAppendRefusesARecordWithoutTime(t *testing.T) {
	if err := Append(t.TempDir(), Record{Agent: "Agent-1", Verdict: Applied}); err == nil {
		t.Fatal("a record without a time was written")
	}
}
