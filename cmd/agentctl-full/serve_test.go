package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// missionControl is a mission control server over a fresh runtime made by
// 'agentctl init', with the demo's board, as 'agentctl serve' wires it.
type missionControl struct {
	root, token string
	srv         *httptest.Server
	feed        *missioncontrol.Feed
}

func startMissionControl(t *testing.T) *missionControl {
	t.Helper()
	_, root := demoRuntime(t)
	env := &cli.Env{Root: root, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		t.Fatal(err)
	}
	feed, err := missioncontrol.NewFeed(root, mcSettings(cfg), missioncontrol.FeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { feed.Run(ctx); close(done) }()
	token, err := newToken(root)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&missioncontrol.Server{Feed: feed, Actions: mcActions(env, cfg), Token: token}).Handler())
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return &missionControl{root: root, token: token, srv: srv, feed: feed}
}

// get reads path with the Authorization header auth ("" for none).
func (mc *missionControl) get(t *testing.T, path, auth string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", mc.srv.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// noRedirects shows a test the login's answer itself.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// post sends a write as the page does; it returns the status and the body.
func (mc *missionControl) post(t *testing.T, path string, body any, header map[string]string) (int, map[string]string) {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", mc.srv.URL+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+mc.token)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]string
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// awaitSnapshot waits until the feed's snapshot satisfies cond, looking
// again only when the feed says it changed: a change left unsaid, or one
// that never comes, hangs the test until -timeout. Meanwhile it says now
// and then what it waits for, and the snapshot it has, as poll.Until does.
func (mc *missionControl) awaitSnapshot(t *testing.T, what string, cond func(missioncontrol.Snapshot) bool) missioncontrol.Snapshot {
	t.Helper()
	for {
		snap, _, _, changed := mc.feed.Current()
		if cond(snap) {
			return snap
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			msg := fmt.Sprintf("%s: still waiting for %s; snapshot: %+v", t.Name(), what, snap)
			t.Log(msg)
			fmt.Fprintln(os.Stderr, msg)
		}
	}
}

func agentOf(s missioncontrol.Snapshot, name string) missioncontrol.Agent {
	for _, a := range s.Agents {
		if a.Name == name {
			return a
		}
	}
	return missioncontrol.Agent{}
}

func TestServeWritesNeedTheTokenAndTheSameOrigin(t *testing.T) {
	mc := startMissionControl(t)
	send := missioncontrol.SendRequest{To: "Agent-1", Body: "hello"}
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", map[string]string{"Authorization": ""}, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", len(mc.token))}, http.StatusUnauthorized},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"a cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a form post", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"a rebound host name", map[string]string{"Host": "evil.example:7878"}, http.StatusMisdirectedRequest},
	} {
		if code, out := mc.post(t, "/api/send", send, c.header); code != c.want {
			t.Errorf("%s: status %d (%v), want %d", c.name, code, out, c.want)
		}
	}
	mb, err := mailbox.Open(mc.root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if pending, _ := mb.List(mailbox.StatePending); len(pending) != 0 {
		t.Fatalf("a refused request delivered %d message(s)", len(pending))
	}
	fi, err := os.Stat(filepath.Join(mc.root, TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	req, _ := http.NewRequest("GET", mc.srv.URL+"/api/snapshot", nil)
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("a read through a rebound host name: status %d", resp.StatusCode)
	}
}

func TestServeSendRetryReplyAndBoardGoThroughTheCommandsCode(t *testing.T) {
	mc := startMissionControl(t)

	code, out := mc.post(t, "/api/send", missioncontrol.SendRequest{To: "Agent-2", Subject: "review", Body: "Please review T-7", Priority: "urgent", TaskID: "DEMO-1"}, nil)
	if code != http.StatusOK {
		t.Fatalf("send: %d %v", code, out)
	}
	snap := mc.awaitSnapshot(t, "Agent-2's urgent message", func(s missioncontrol.Snapshot) bool { return agentOf(s, "Agent-2").Queue["urgent"] == 1 })
	col := snap.Columns[0]
	i := slices.IndexFunc(col.Tasks, func(tk missioncontrol.Task) bool { return tk.ID == "DEMO-1" })
	if col.Status != "todo" || i < 0 || len(col.Tasks[i].Messages) != 1 || col.Tasks[i].Messages[0].Subject != "review" {
		t.Errorf("DEMO-1 does not list the message about it: %+v", col)
	}
	if code, out := mc.post(t, "/api/send", missioncontrol.SendRequest{To: "Agent 2", Body: "x"}, nil); code != http.StatusUnprocessableEntity || !strings.Contains(out["error"], "Agent 2") {
		t.Errorf("a bad name: %d %v", code, out)
	}

	// A dead letter, made by a consumer as a runner makes one.
	mb, _ := mailbox.Open(mc.root, "Agent-3")
	msg := deadLetter(t, mb, []string{"Agent-1", "Agent-2", "Agent-3", "human"}, "the agent crashed")
	snap = mc.awaitSnapshot(t, "the dead letter", func(s missioncontrol.Snapshot) bool { return len(s.Dead) == 1 })
	if d := snap.Dead[0]; d.Ref != msg.ID || !strings.Contains(d.Reason, "the agent crashed") {
		t.Errorf("dead letter shown as %+v", d)
	}
	if code, out := mc.post(t, "/api/retry", missioncontrol.RetryRequest{Ref: msg.ID, Mailbox: "Agent-3"}, nil); code != http.StatusOK || !strings.Contains(out["message"], "back in Agent-3's inbox") {
		t.Fatalf("retry: %d %v", code, out)
	}
	mc.awaitSnapshot(t, "the retried message pending", func(s missioncontrol.Snapshot) bool {
		return len(s.Dead) == 0 && agentOf(s, "Agent-3").Pending == 1
	})
	if code, _ := mc.post(t, "/api/retry", missioncontrol.RetryRequest{Ref: msg.ID}, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a second retry: status %d, want 422", code)
	}

	// A question for the human, answered from the page.
	human, _ := mailbox.Open(mc.root, "human")
	q := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "Agent-1", To: "human", Subject: "which branch?", Body: "main or release?", CreatedAt: time.Now().UTC()}
	if err := human.Deliver(q); err != nil {
		t.Fatal(err)
	}
	mc.awaitSnapshot(t, "the question", func(s missioncontrol.Snapshot) bool { return len(s.People) == 1 && len(s.People[0].Waiting) == 1 })
	if code, out := mc.post(t, "/api/reply", missioncontrol.ReplyRequest{ID: q.ID, Text: "main"}, nil); code != http.StatusOK {
		t.Fatalf("reply: %d %v", code, out)
	}
	// The question leaves the inbox before its receipt reaches the
	// archive, where its thread is read from: a view may show one and not
	// yet the other.
	mc.awaitSnapshot(t, "the answer in Agent-1's inbox and the thread of the question and its answer", func(s missioncontrol.Snapshot) bool {
		if len(s.People[0].Waiting) != 0 || agentOf(s, "Agent-1").Pending != 1 {
			return false
		}
		return slices.ContainsFunc(s.Threads, func(th missioncontrol.Thread) bool {
			return th.ID == q.ID && len(th.Hops) == 2 && th.Hops[1].From == "human" && th.Hops[1].To == "Agent-1"
		})
	})

	// Approval requests, as a runner parks them, settled from the page.
	approveID, denyID := agents.ApprovalID("m1", "send[0]"), agents.ApprovalID("m1", "send[1]")
	for _, item := range []string{"send[0]", "send[1]"} {
		if err := human.Deliver(heldSend(item, "Agent-3", item+" body")); err != nil {
			t.Fatal(err)
		}
	}
	mc.awaitSnapshot(t, "the approval requests", func(s missioncontrol.Snapshot) bool { return len(s.People[0].Waiting) == 2 })
	if code, out := mc.post(t, "/api/approve", missioncontrol.ApprovalRequest{ID: approveID}, nil); code != http.StatusOK || !strings.Contains(out["message"], "approved: send") {
		t.Fatalf("approve: %d %v", code, out)
	}
	if code, out := mc.post(t, "/api/approve", missioncontrol.ApprovalRequest{ID: approveID}, nil); code != http.StatusUnprocessableEntity || !strings.Contains(out["error"], "approved already") {
		t.Errorf("a second approval: %d %v", code, out)
	}
	if code, out := mc.post(t, "/api/deny", missioncontrol.ApprovalRequest{ID: denyID, Reason: "not now"}, nil); code != http.StatusOK || !strings.Contains(out["message"], "Agent-1 told") {
		t.Fatalf("deny: %d %v", code, out)
	}
	mc.awaitSnapshot(t, "the approved message in Agent-3's inbox", func(s missioncontrol.Snapshot) bool {
		return len(s.People[0].Waiting) == 0 && agentOf(s, "Agent-3").Pending == 2
	})

	if code, out := mc.post(t, "/api/task", missioncontrol.TaskRequest{ID: "DEMO-1", Changes: []string{"status=review", "owner=Agent-2"}}, nil); code != http.StatusOK {
		t.Fatalf("board set: %d %v", code, out)
	}
	mc.awaitSnapshot(t, "DEMO-1 in review", func(s missioncontrol.Snapshot) bool {
		for _, c := range s.Columns {
			if c.Status == "review" && len(c.Tasks) == 1 && c.Tasks[0].Owner == "Agent-2" {
				return true
			}
		}
		return false
	})
	data, _ := os.ReadFile(filepath.Join(mc.root, "project_board", "board.yaml"))
	if !strings.Contains(string(data), "status: review") {
		t.Errorf("the board file was not changed:\n%s", data)
	}
	if code, out := mc.post(t, "/api/task", missioncontrol.TaskRequest{ID: "DEMO-1", Changes: []string{"status=finished"}}, nil); code != http.StatusUnprocessableEntity || !strings.Contains(out["error"], "finished") {
		t.Errorf("a bad status: %d %v", code, out)
	}
}

func TestServeStreamsASnapshotWhenAFileMoves(t *testing.T) {
	mc := startMissionControl(t)
	resp := mc.get(t, "/api/events", "Bearer "+mc.token)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan missioncontrol.Snapshot)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var s missioncontrol.Snapshot
				if json.Unmarshal([]byte(data), &s) == nil {
					events <- s
				}
			}
		}
		close(events)
	}()
	first := <-events
	if len(first.Agents) != 3 || agentOf(first, "Agent-1").Pending != 0 {
		t.Fatalf("first event: %+v", first)
	}
	// A file dropped by hand, as Dream.OS scripts do.
	msg := `{"sender": "Agent-2", "recipient": "Agent-1", "content": "dropped by hand", "priority": "HIGH"}`
	if err := os.WriteFile(filepath.Join(mailbox.Dir(mc.root, "Agent-1"), "inbox", "dropped.json"), []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stream that never shows it hangs the test until -timeout.
	for s := range events {
		if a := agentOf(s, "Agent-1"); a.Pending == 1 && a.Queue["high"] == 1 {
			return
		}
	}
	t.Fatal("the stream ended")
}

// A person with more waiting than a snapshot holds sees the first of them
// and the exact count, and pages through the rest with /api/messages, in
// the order they are answered, until the last page says there is no more.
func TestServePagesWhatTheSnapshotLeavesOut(t *testing.T) {
	mc := startMissionControl(t)
	mb, err := mailbox.Open(mc.root, "human")
	if err != nil {
		t.Fatal(err)
	}
	const n = missioncontrol.DefaultShown + 12
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range n {
		msg := mailbox.Message{ID: fmt.Sprintf("q-%03d", i), From: "Agent-1", To: "human", Type: "question",
			Subject: fmt.Sprint("question ", i), Body: "?", CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := mb.Deliver(msg); err != nil {
			t.Fatal(err)
		}
	}
	s := mc.awaitSnapshot(t, "every question counted", func(s missioncontrol.Snapshot) bool {
		return len(s.People) == 1 && s.People[0].Pending == n
	})
	if got := len(s.People[0].Waiting); got != missioncontrol.DefaultShown {
		t.Fatalf("the snapshot holds %d questions, want the first %d", got, missioncontrol.DefaultShown)
	}
	var ids []string
	for _, l := range s.People[0].Waiting {
		ids = append(ids, l.ID)
	}
	for offset := len(ids); offset != 0; {
		resp := mc.get(t, fmt.Sprintf("/api/messages?mailbox=human&state=pending&offset=%d&limit=5", offset), "Bearer "+mc.token)
		var page missioncontrol.PageOf
		err := json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || page.Total != n {
			t.Fatalf("page at %d: status %d, %+v, %v", offset, resp.StatusCode, page, err)
		}
		for _, l := range page.Letters {
			ids = append(ids, l.ID)
		}
		offset = page.Next
	}
	for i, id := range ids {
		if want := fmt.Sprintf("q-%03d", i); id != want || len(ids) != n {
			t.Fatalf("paged %d questions %v; want q-000 to q-%03d in order", len(ids), ids, n-1)
		}
	}
	for _, bad := range []string{"mailbox=nobody&state=pending", "mailbox=human&state=lost", "mailbox=human&state=done&offset=-1"} {
		resp := mc.get(t, "/api/messages?"+bad, "Bearer "+mc.token)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /api/messages?%s: status %d, want 400", bad, resp.StatusCode)
		}
	}
}

// heldSend is an approval request as a runner parks it: item of Agent-1's
// reply to m1 wanted to send body to `to`, and a guardrail held it.
func heldSend(item, to, body string) mailbox.Message {
	id := agents.ApprovalID("m1", item)
	send := map[string]any{"id": "msg_held_" + strings.Trim(item, "send[]"), "from": "Agent-1", "to": to, "type": "message", "priority": "normal",
		"subject": "held", "body": body, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "meta": map[string]any{}}
	return mailbox.Message{ID: id, From: "Agent-1", To: "human", Type: "approval", Subject: "approval: Agent-1 wants to send", Body: "approve?",
		CreatedAt: time.Now().UTC(), Meta: map[string]any{"approval": map[string]any{"agent": "Agent-1", "message": "m1", "item": item,
			"guard": "broadcast", "reason": "a send to all", "sends": []any{send}}}}
}

// Another account of the machine reads nothing without the token: not the
// page, not the snapshot, not the event stream. The login link trades the
// token for a cookie the browser keeps from scripts and other sites, and
// the cookie then opens everything.
func TestServeReadsNeedTheToken(t *testing.T) {
	mc := startMissionControl(t)
	paths := []string{"/", "/app.js", "/api/snapshot", "/api/events", "/api/messages?mailbox=Agent-1&state=pending"}
	for _, p := range paths {
		for _, auth := range []string{"", "Bearer " + strings.Repeat("0", len(mc.token)), "Basic " + mc.token} {
			resp := mc.get(t, p, auth)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with %q: status %d, want 401", p, auth, resp.StatusCode)
			}
		}
		resp := mc.get(t, p, "Bearer "+mc.token)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the token: status %d, want 200", p, resp.StatusCode)
		}
	}
	if resp := mc.get(t, "/login?token="+strings.Repeat("0", len(mc.token)), ""); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("a login with a wrong token: status %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp := mc.get(t, "/login?token="+mc.token, "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: status %d, location %q; want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value != mc.token {
		t.Fatalf("login set %+v; want one HttpOnly SameSite=Strict cookie holding the token", cookies)
	}
	for _, p := range paths {
		req, _ := http.NewRequest("GET", mc.srv.URL+p, nil)
		req.AddCookie(cookies[0])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the cookie: status %d, want 200", p, resp.StatusCode)
		}
	}
	// The page's writes carry the cookie, not a header.
	data, _ := json.Marshal(missioncontrol.SendRequest{To: "Agent-1", Body: "from the page"})
	req, _ := http.NewRequest("POST", mc.srv.URL+"/api/send", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(cookies[0])
	wresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wresp.Body.Close()
	if wresp.StatusCode != http.StatusOK {
		t.Errorf("a write with the cookie: status %d", wresp.StatusCode)
	}
}

// Connections without the token cannot hold the slots: another account
// on the machine that opens every one of them, and keeps asking without
// the token, does not lock the person out. Only when every slot is the
// person's is a new connection answered 503 at once, instead of waiting
// behind them; a slot freed serves again.
func TestServeAnswers503PastItsConnectionCap(t *testing.T) {
	mc := startMissionControl(t)
	const limit = 4
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServeServer(mc.srv.Config.Handler)
	go srv.Serve(missioncontrol.LimitListener(ln, limit))
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/api/snapshot"
	// A request to the real server that never answers fails, rather than
	// hang the wait it is looked at from, once the test's waits give up.
	ctx, cancel := poll.Context(t)
	defer cancel()
	get := func(client *http.Client, token string) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && !strings.Contains(string(body), "maximum of 4 connections") {
			t.Errorf("503 says %q", body)
		}
		return resp.StatusCode
	}
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if code := get(once, mc.token); code != http.StatusOK {
		t.Fatalf("before the flood: status %d", code)
	}
	// Idle connections, and connections asking without the token.
	var idle []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	// The person's connection takes the slot of the oldest of them (tried
	// again while the server is still accepting the flood).
	poll.Until(t, "the person's connection to take a slot of the flood's", func() bool {
		code := get(once, mc.token)
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Fatalf("with %d connections without the token: status %d, want 200", len(idle), code)
		}
		return code == http.StatusOK
	})
	for _, c := range idle {
		c.Close()
	}
	// The person's own kept-alive connections fill every slot, once the
	// server has closed the connections before them.
	var mine []*http.Client
	poll.Until(t, fmt.Sprintf("the person's own %d connections in every slot", limit), func() bool {
		c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
		switch code := get(c, mc.token); {
		case code == http.StatusOK:
			mine = append(mine, c)
		case code != http.StatusServiceUnavailable:
			t.Fatalf("the person's connection %d: status %d", len(mine)+1, code)
		}
		return len(mine) == limit
	})
	if code := get(once, mc.token); code != http.StatusServiceUnavailable {
		t.Fatalf("with every slot the person's: status %d, want 503", code)
	}
	mine[0].CloseIdleConnections()
	poll.Until(t, "a slot to come back after a connection closed", func() bool { return get(once, mc.token) == http.StatusOK })
}
