package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentctl/agentctl/internal/loopback"
)

// PageTarget is one page a DevTools endpoint lists.
type PageTarget struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
	WS    string `json:"webSocketDebuggerUrl"`
}

// ListPages returns the pages (not workers or extensions) a DevTools
// endpoint on loopback lists at /json/list.
func ListPages(ctx context.Context, endpoint string) ([]PageTarget, error) {
	if err := loopback.CheckEndpoint(endpoint); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/json/list", nil)
	if err != nil {
		return nil, err
	}
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: nothing answers at %s (is the app started with --remote-debugging-port?): %v", ErrWindowNotFound, endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s/json/list answered %s", ErrWindowNotFound, endpoint, resp.Status)
	}
	var all []PageTarget
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		return nil, fmt.Errorf("cannot read the page list of %s: %w", endpoint, err)
	}
	var pages []PageTarget
	for _, p := range all {
		if p.Type == "page" {
			pages = append(pages, p)
		}
	}
	return pages, nil
}

// findPage returns the one page of endpoint whose title matches title.
func findPage(ctx context.Context, endpoint string, title *regexp.Regexp) (PageTarget, error) {
	pages, err := ListPages(ctx, endpoint)
	if err != nil {
		return PageTarget{}, err
	}
	var found []PageTarget
	for _, p := range pages {
		if title.MatchString(p.Title) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return PageTarget{}, fmt.Errorf("%w: no page of %s has a title matching %q (%s)", ErrWindowNotFound, endpoint, title, pageTitles(pages))
	default:
		return PageTarget{}, fmt.Errorf("%w: %d pages of %s have a title matching %q (%s); make cdp.target match exactly one",
			ErrWindowNotConfirmed, len(found), endpoint, title, pageTitles(found))
	}
}

func pageTitles(pages []PageTarget) string {
	if len(pages) == 0 {
		return "it lists no pages"
	}
	t := make([]string, len(pages))
	for i, p := range pages {
		t[i] = fmt.Sprintf("%q", p.Title)
	}
	return "pages: " + strings.Join(t, ", ")
}

// page is a DevTools connection to one page target, made straight to the
// page's own socket: closing it never closes the page, and commands go to
// that page and no other.
type page struct {
	target PageTarget
	b      *chromedp.Browser
	cancel context.CancelFunc
	lost   <-chan struct{}
}

// errPageClosed: the connection to the page went away (the page or the
// app closed).
var errPageClosed = fmt.Errorf("%w: the page closed", ErrWindowNotFound)

// errPageNavigated: the page reloaded or navigated while a script ran in
// it, which the DevTools port reports in place of the script's result.
var errPageNavigated = errors.New("the page reloaded or navigated")

func dialPage(ctx context.Context, endpoint string, t PageTarget) (*page, error) {
	ws := t.WS
	if ws == "" {
		u, _ := url.Parse(endpoint)
		ws = "ws://" + u.Host + "/devtools/page/" + t.ID
	}
	u, err := url.Parse(ws)
	if err != nil {
		return nil, fmt.Errorf("page %q has a bad socket address %q", t.Title, ws)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("page %q offers a socket off loopback (%s); refusing it", t.Title, ws)
	}
	cctx, cancel := context.WithCancel(context.Background())
	quiet := func(string, ...any) {}
	b, err := chromedp.NewBrowser(cctx, ws, chromedp.WithBrowserLogf(quiet), chromedp.WithBrowserErrorf(quiet))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: cannot connect to page %q: %v", ErrWindowNotFound, t.Title, err)
	}
	return &page{target: t, b: b, cancel: cancel, lost: b.LostConnection}, nil
}

func (p *page) close() { p.cancel() }

// call runs a DevTools command on the page, failing with errPageClosed
// rather than waiting forever when the connection goes.
func (p *page) call(ctx context.Context, method string, params, res any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.lost:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := p.b.Execute(ctx, method, params, res)
	select {
	case <-p.lost:
		return errPageClosed
	default:
	}
	return err
}

// eval runs fn, a JavaScript function of one argument, with arg (as JSON)
// in the page, awaits its promise and decodes the JSON of what it returns
// into out.
func (p *page) eval(ctx context.Context, fn string, arg, out any) error {
	a, err := json.Marshal(arg)
	if err != nil {
		return err
	}
	params := map[string]any{
		"expression":    "Promise.resolve((" + fn + ")(" + string(a) + ")).then(r => JSON.stringify(r === undefined ? null : r))",
		"awaitPromise":  true,
		"returnByValue": true,
		"userGesture":   true,
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.call(ctx, "Runtime.evaluate", params, &res); err != nil {
		if strings.Contains(err.Error(), "Inspected target navigated or closed") {
			return fmt.Errorf("%w: %v", errPageNavigated, err)
		}
		return err
	}
	if e := res.Exception; e != nil {
		msg := e.Exception.Description
		if msg == "" {
			msg = e.Text
		}
		return fmt.Errorf("the page's script failed: %s", firstLine(msg))
	}
	var s string
	if err := json.Unmarshal(res.Result.Value, &s); err != nil {
		return fmt.Errorf("the page's script gave %s, not a JSON string", res.Result.Value)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal([]byte(s), out)
}

// pressEnter sends Enter to the element that has the page's focus, as a
// key event of the page: nothing reaches the desktop.
func (p *page) pressEnter(ctx context.Context) error {
	for _, typ := range []string{"keyDown", "keyUp"} {
		params := map[string]any{"type": typ, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}
		if typ == "keyDown" {
			params["text"] = "\r"
		}
		if err := p.call(ctx, "Input.dispatchKeyEvent", params, nil); err != nil {
			return err
		}
	}
	return nil
}

// pageKey is a key press for pressKey: the key's name, code, Windows
// key code and CDP modifier bits (2 Ctrl, 4 Meta).
type pageKey struct {
	key, code string
	vk, mod   int
}

// MarshalJSON gives the key to the page scripts' key(), which sends it
// as page events.
func (k pageKey) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"key": k.key, "code": k.code, "keyCode": k.vk,
		"ctrlKey": k.mod&2 != 0, "metaKey": k.mod&4 != 0})
}

// pressKey sends a key press to the element that has the page's focus,
// as a key event of the page: nothing reaches the desktop.
func (p *page) pressKey(ctx context.Context, k pageKey) error {
	for _, typ := range []string{"keyDown", "keyUp"} {
		params := map[string]any{"type": typ, "key": k.key, "code": k.code, "windowsVirtualKeyCode": k.vk,
			"nativeVirtualKeyCode": k.vk, "modifiers": k.mod}
		if err := p.call(ctx, "Input.dispatchKeyEvent", params, nil); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// isPageClosed tells a connection lost from other failures.
func isPageClosed(err error) bool { return errors.Is(err, errPageClosed) }
