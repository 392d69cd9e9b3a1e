//go:build linux

package cursor

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// cdpBrowser is a headless Chromium with a DevTools port on loopback, as
// Cursor is when started for the CDP driver.
type cdpBrowser struct {
	*chromium.Browser
	endpoint string
}

func startCDPBrowser(t testing.TB) *cdpBrowser {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	b, err := chromium.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	return &cdpBrowser{Browser: b, endpoint: b.Endpoint}
}

// chatPageTab is a stand-in chat page open in a cdpBrowser.
type chatPageTab struct {
	b     *cdpBrowser
	log   string
	title string
	id    string
}

// openChatPage serves fixtures/chatpage with a recorder of its own and
// opens it in b as a page titled title, playing s.
func (b *cdpBrowser) openChatPage(t testing.TB, title string, s shape, ignoreSubmits int) *chatPageTab {
	t.Helper()
	return b.openChatPageWith(t, title, s, ignoreSubmits, nil)
}

// openChatPageWith is openChatPage with more of the page's parameters
// (see fixtures/chatpage/index.html).
func (b *cdpBrowser) openChatPageWith(t testing.TB, title string, s shape, ignoreSubmits int, extra url.Values) *chatPageTab {
	t.Helper()
	dir := t.TempDir()
	c := &chatPageTab{b: b, log: filepath.Join(dir, "log.jsonl"), title: title}
	rec := exec.Command("/usr/bin/python3", filepath.Join("..", "fixtures", "chatpage", "recorder.py"), "--log", c.log)
	rec.Stderr = os.Stderr
	rec.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := rec.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(); err != nil {
		t.Fatalf("cannot start the chat page's recorder: %v", err)
	}
	t.Cleanup(func() { rec.Process.Signal(syscall.SIGTERM); rec.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("the recorder did not say where it listens: %q, %v", line, err)
	}
	q := pageQuery(title, s, ignoreSubmits)
	for k, v := range extra {
		q[k] = v
	}
	page := "http://127.0.0.1:" + port + "/index.html?" + q.Encode()
	if c.id, err = b.Open(page); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(c.id) })
	c.await(t, func(p PageTarget) bool { return p.ID == c.id && p.Title == title })
	return c
}

// await waits until the browser lists a page that ok accepts, and returns
// its id.
func (c *chatPageTab) await(t testing.TB, ok func(PageTarget) bool) string {
	t.Helper()
	var id string
	poll.Until(t, fmt.Sprintf("the browser to show page %q", c.title), func() bool {
		pages, err := ListPages(context.Background(), c.b.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			if ok(p) {
				id = p.ID
				return true
			}
		}
		return false
	})
	return id
}

// awaitLoaded waits until the page's own document has loaded and shows
// its title; looks made while it is still reloading may fail.
func (c *chatPageTab) awaitLoaded(t testing.TB) {
	t.Helper()
	c.awaitDocument(t, "true", "loading")
}

// reload reloads the page and waits until the new document has loaded: one
// without the state the driver keeps in a page (a look at the old one,
// before the reload began, would pass for it).
func (c *chatPageTab) reload(t testing.TB) {
	t.Helper()
	c.script(t, "location.reload()")
	c.awaitDocument(t, "!window.__agentctl", "reloading")
}

// awaitDocument waits until the page's document, one of which the
// JavaScript expression which holds, has loaded and shows the page's
// title; what names the wait in a failure.
func (c *chatPageTab) awaitDocument(t testing.TB, which, what string) {
	t.Helper()
	js := `(() => (` + which + `) && document.readyState === "complete" ? document.title : "")`
	poll.Until(t, fmt.Sprintf("page %q to finish %s", c.title, what), func() bool {
		p, err := dialPage(context.Background(), c.b.endpoint, PageTarget{ID: c.id, Title: c.title})
		if err != nil {
			return false
		}
		defer p.close()
		var title string
		return p.eval(context.Background(), js, nil, &title) == nil && title == c.title
	})
}

// seat is the cdp block for this page, through the fixture's own
// selectors and its copy button.
func (c *chatPageTab) seat() CDPSettings {
	return CDPSettings{
		Endpoint: c.b.endpoint,
		Target:   "^" + regexp.QuoteMeta(c.title) + "$",
		Composer: "#composer",
		Busy:     "#send.stop",
		Reply:    "#transcript > .msg:not(.user):not(#generating) > div:last-child",
		Copy:     "#copy",
	}
}

func (c *chatPageTab) prompts(t testing.TB) []string {
	return texts(recordedEvents(t, c.log), "prompt")
}
func (c *chatPageTab) replies(t testing.TB) []string {
	return texts(recordedEvents(t, c.log), "replied")
}

// awaitPrompts waits until the page has received n prompts.
func (c *chatPageTab) awaitPrompts(t testing.TB, n int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("page %q to receive prompt %d", c.title, n), func() bool { return len(c.prompts(t)) >= n })
}

// script runs JavaScript in the page, as a person at the app could.
func (c *chatPageTab) script(t testing.TB, js string) {
	t.Helper()
	p, err := dialPage(context.Background(), c.b.endpoint, PageTarget{ID: c.id, Title: c.title})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if err := p.call(context.Background(), "Runtime.evaluate", map[string]any{"expression": js}, nil); err != nil {
		t.Fatalf("running %q in page %q: %v", js, c.title, err)
	}
}

// evalString runs JavaScript in the page and returns its value, a string.
func (c *chatPageTab) evalString(t testing.TB, js string) string {
	t.Helper()
	p, err := dialPage(context.Background(), c.b.endpoint, PageTarget{ID: c.id, Title: c.title})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	var s string
	if err := p.eval(context.Background(), "(() => "+js+")", nil, &s); err != nil {
		t.Fatalf("running %q in page %q: %v", js, c.title, err)
	}
	return s
}

// closePage closes the page, as a person closing the app's window.
func (c *chatPageTab) closePage(t testing.TB) {
	t.Helper()
	if err := c.b.Close(c.id); err != nil {
		t.Fatal(err)
	}
}

// cdpTestGUI is the timing the tests use: a max_pause longer than the
// shapes' longest pause, short waits elsewhere so failures come quickly.
func cdpTestGUI() Timings {
	return Timings{
		Quiet:       100 * time.Millisecond,
		MaxPause:    3 * time.Second,
		Submit:      time.Second,
		TurnTimeout: 60 * time.Second,
		LockWait:    30 * time.Second,
	}
}

func newTestCDP(t testing.TB, seat CDPSettings) *CDP {
	t.Helper()
	return newTestCDPWith(t, seat, cdpTestGUI())
}

func newTestCDPWith(t testing.TB, seat CDPSettings, gui Timings) *CDP {
	t.Helper()
	d, err := NewCDP(seat, gui, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
