//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
)

// serveProcess is 'agentctl serve' running as its own process, and a
// viewer of its event stream.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	token  string
	events chan []byte // each snapshot the stream delivers
}

// launchServe starts 'agentctl serve' over root and reads the address and
// token it prints.
func launchServe(b *testing.B, root string) *serveProcess {
	b.Helper()
	cmd := exec.Command("agentctl", "--root", root, "serve", "--addr", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	url := regexp.MustCompile(`http://[^/]+`).FindString(line)
	token := regexp.MustCompile(`token=(\S+)`).FindStringSubmatch(line)
	if token == nil {
		b.Fatalf("serve printed %q, with no token", line)
	}
	return &serveProcess{cmd: cmd, url: url, token: token[1]}
}

func (sp *serveProcess) stop() {
	sp.cmd.Process.Signal(syscall.SIGTERM)
	sp.cmd.Wait()
}

func benchServe(b *testing.B, root string) *serveProcess {
	b.Helper()
	sp := launchServe(b, root)
	b.Cleanup(sp.stop)
	sp.events = make(chan []byte, 1024)
	url, token := sp.url, []string{"", sp.token}
	req, _ := http.NewRequest("GET", url+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				sp.events <- append([]byte(nil), data...)
			}
		}
	}()
	<-sp.events // the snapshot every viewer gets first
	return sp
}

// BenchmarkServeFileEventToUpdate drops a message file into an inbox, as a
// person or a Dream.OS script does, and times how long until a viewer of
// 'agentctl serve' gets the snapshot that shows it: p50 and p99.
func BenchmarkServeFileEventToUpdate(b *testing.B) {
	root := filepath.Join(b.TempDir(), "runtime")
	mustAgentctl(b, root, "init", "--agents", "8")
	sp := benchServe(b, root)
	lat := dropTimes(b, sp, root, 0)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[int(0.99*float64(len(lat)-1))].Microseconds())/1000, "p99-ms")
}

// dropTimes drops b.N messages into Agent-5's inbox, one at a time, the
// way a person or a Dream.OS script does, with pending already waiting,
// and returns, sorted, how long each took to show in a snapshot of sp.
func dropTimes(b *testing.B, sp *serveProcess, root string, pending int) []time.Duration {
	b.Helper()
	inbox := filepath.Join(mailbox.Dir(root, "Agent-5"), "inbox")
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		msg := fmt.Sprintf(`{"id": "bench-%d", "from": "human", "to": "Agent-5", "body": "n"}`, i)
		tmp := filepath.Join(inbox, fmt.Sprintf(".bench-%d.tmp", i))
		if err := os.WriteFile(tmp, []byte(msg), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := os.Rename(tmp, filepath.Join(inbox, fmt.Sprintf("bench-%d.json", i))); err != nil {
			b.Fatal(err)
		}
		want := fmt.Sprintf(`"name":"Agent-5","runner":"stopped","state":"-","queue":{"normal":%d}`, pending+i+1)
		for data := range sp.events {
			if bytes.Contains(data, []byte(want)) {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	return lat
}

// archiveMessages writes n archived messages with their receipts into the
// mailbox of agent, over five days, in the layout runners leave.
func archiveMessages(b *testing.B, root, agent string, n int) {
	dir := mailbox.Dir(root, agent)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		at := base.Add(time.Duration(i) * 5 * 24 * time.Hour / time.Duration(n))
		day := filepath.Join(dir, "archive", at.Format("2006-01-02"))
		if i == 0 || at.Format("2006-01-02") != base.Add(time.Duration(i-1)*5*24*time.Hour/time.Duration(n)).Format("2006-01-02") {
			os.MkdirAll(day, 0o755)
		}
		id := fmt.Sprintf("msg_%s_%06d%s", at.Format("20060102_150405"), i, strings.ToLower(agent[len(agent)-2:]))
		msg := mailbox.Message{ID: id, From: "Agent-1", To: agent, Type: "task", Priority: mailbox.Normal, Subject: "archived " + id,
			Body: "An archived message of the benchmark.", CreatedAt: at, ThreadID: "t-" + strconv.Itoa(i%500), TaskID: "T-" + strconv.Itoa(i%40)}
		receipt, _ := json.Marshal(map[string]any{"id": id, "agent": agent, "stage": "done",
			"receipt": mailbox.Receipt{ID: id, Agent: agent, Outcome: "done", ClaimedAt: at, CompletedAt: at.Add(3 * time.Second), Attempts: 1}})
		if err := os.WriteFile(filepath.Join(day, id+".json"), msg.Encode(), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(day, id+mailbox.ReceiptSuffix), append(receipt, '\n'), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServeIdle50Agents100kArchived runs 'agentctl serve' over 50
// agents whose archives hold 100,000 messages, with a viewer connected,
// leaves it idle for SERVE_IDLE_SECONDS (default 30) and reports its RSS,
// the CPU it used meanwhile and the snapshots it sent. Run it alone:
//
//	go test -run '^$' -bench ServeIdle -benchtime 1x ./cmd/agentctl-full
func BenchmarkServeIdle50Agents100kArchived(b *testing.B) {
	secs := 30
	if s, err := strconv.Atoi(os.Getenv("SERVE_IDLE_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	const agents, archived = 50, 100_000
	for range b.N {
		root := filepath.Join(b.TempDir(), "runtime")
		mustAgentctl(b, root, "init", "--agents", strconv.Itoa(agents))
		var wg sync.WaitGroup
		for a := 1; a <= agents; a++ {
			wg.Add(1)
			go func() { defer wg.Done(); archiveMessages(b, root, fmt.Sprintf("Agent-%d", a), archived/agents) }()
		}
		wg.Wait()
		sp := benchServe(b, root)
		time.Sleep(2 * time.Second) // past start-up
		pid := sp.cmd.Process.Pid
		cpu0 := usage(b, process.CPUTicks, pid)
		sent := len(sp.events)
		time.Sleep(time.Duration(secs) * time.Second)
		cpu1 := usage(b, process.CPUTicks, pid)
		b.ReportMetric(float64(usage(b, process.RSSKB, pid))/1024, "RSS-MB")
		b.ReportMetric(float64(cpu1-cpu0)*10/float64(secs), "CPU-ms/s") // 100 ticks per second
		b.ReportMetric(float64(len(sp.events)-sent), "snapshots-sent")
	}
}

// usage reads one figure of a process for a benchmark.
func usage(b *testing.B, read func(pid int) (int, error), pid int) int {
	n, err := read(pid)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// pendMessages writes n pending messages into the inbox of agent, as
// canonical files a sender leaves.
func pendMessages(b *testing.B, root, agent string, n int) {
	inbox := filepath.Join(mailbox.Dir(root, agent), mailbox.InboxDir)
	base := time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("pend-%06d", i)
		msg := mailbox.Message{ID: id, From: "Agent-1", To: agent, Type: "task", Priority: mailbox.Normal, Subject: "pending " + id,
			Body: "A pending message of the benchmark.", CreatedAt: base.Add(time.Duration(i) * time.Second)}
		if err := os.WriteFile(filepath.Join(inbox, mailbox.Stem(id)+".json"), msg.Encode(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServePageUpdate10kPending10kArchived times, like
// BenchmarkServeFileEventToUpdate, a dropped file until the snapshot that
// shows it, in a mailbox holding 10,000 pending and 10,000 archived
// messages: the p99 is what a page waits for a change.
func BenchmarkServePageUpdate10kPending10kArchived(b *testing.B) {
	const pending, archived = 10_000, 10_000
	root := filepath.Join(b.TempDir(), "runtime")
	mustAgentctl(b, root, "init", "--agents", "8")
	pendMessages(b, root, "Agent-5", pending)
	archiveMessages(b, root, "Agent-5", archived)
	sp := benchServe(b, root)
	lat := dropTimes(b, sp, root, pending)
	p99 := lat[int(0.99*float64(len(lat)-1))]
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(p99.Microseconds()), "µs/measure")
}

// BenchmarkServeFirstByte8Agents10kArchived starts 'agentctl serve' over 8
// agents with 10,000 archived messages each and times its first byte of
// the snapshot from the start of the process, against find listing the
// same mailbox folders, each measured in the same loop with a warm cache.
func BenchmarkServeFirstByte8Agents10kArchived(b *testing.B) {
	const agents, archived = 8, 10_000
	root := filepath.Join(b.TempDir(), "runtime")
	mustAgentctl(b, root, "init", "--agents", strconv.Itoa(agents))
	var wg sync.WaitGroup
	for a := 1; a <= agents; a++ {
		wg.Add(1)
		go func() { defer wg.Done(); archiveMessages(b, root, fmt.Sprintf("Agent-%d", a), archived) }()
	}
	wg.Wait()
	find := func() time.Duration {
		start := time.Now()
		if out, err := exec.Command("find", filepath.Join(root, "agent_mailboxes")).Output(); err != nil || len(out) == 0 {
			b.Fatalf("find: %v", err)
		}
		return time.Since(start)
	}
	firstByte := func() time.Duration {
		start := time.Now()
		sp := launchServe(b, root)
		defer sp.stop()
		req, _ := http.NewRequest("GET", sp.url+"/api/snapshot", nil)
		req.Header.Set("Authorization", "Bearer "+sp.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var one [1]byte
		if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	find() // both with the folders in the cache
	firstByte()
	var measure, anchor time.Duration
	b.ResetTimer()
	for range b.N {
		anchor += find()
		measure += firstByte()
	}
	b.StopTimer()
	b.ReportMetric(float64(measure.Microseconds())/float64(b.N), "µs/measure")
	b.ReportMetric(float64(anchor.Microseconds())/float64(b.N), "µs/anchor")
	b.ReportMetric(float64(measure)/float64(anchor), "ratio")
}
