package cursor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/loopback"
)

// CDP is the driver for an agent whose chat is a page of an app started
// with a DevTools port (Cursor with --remote-debugging-port): the prompt is
// put into the page's composer, the page says when the model is busy, and
// the reply is read from the page. Nothing touches the desktop's mouse,
// keyboard or clipboard, so it takes no desktop input lock and turns of
// different agents run at the same time.
type CDP struct {
	cfg        CDPSettings
	title      *regexp.Regexp
	maxPause   time.Duration
	submitWait time.Duration
	turn       time.Duration
	log        io.Writer

	// lock is the desktop input lock, taken only to read the desktop's
	// clipboard (cdp.clipboard: system); nil otherwise.
	lock *InputLock

	mu sync.Mutex // one turn at a time per driver

	// inputKeys: the page's Monaco editor ignored keys sent as page events
	// once, so its keys are pressed as input (CDP's Input domain), which
	// costs a round trip to the renderer each. Guarded by mu.
	inputKeys bool
}

// cdpPoll is how often the page is looked at during a turn: a look is one
// script run over a loopback socket, well under a millisecond.
const cdpPoll = 5 * time.Millisecond

// NewCDP checks the seat's settings and returns the driver. The page is
// found afresh at every turn.
func NewCDP(c CDPSettings, t Timings, opts Options) (*CDP, error) {
	if err := c.ready(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCalibrated, err)
	}
	c = c.withDefaults()
	if err := readReady(c); err != nil {
		return nil, err
	}
	title, err := regexp.Compile(c.Target)
	if err != nil {
		return nil, fmt.Errorf("cdp.target: %w", err)
	}
	t = t.orDefault()
	d := &CDP{
		cfg: c, title: title, log: opts.Log,
		maxPause: t.MaxPause, submitWait: t.Submit, turn: t.TurnTimeout,
	}
	if d.log == nil {
		d.log = io.Discard
	}
	if c.Clipboard == ClipboardSystem && opts.LockDir != "" {
		d.lock = NewInputLock(opts.LockDir, t.LockWait)
		d.lock.Agent = opts.Agent
	}
	return d, nil
}

// ready reports what a seat still lacks, or holds wrong, before a turn can
// run.
func (c CDPSettings) ready() error {
	if c.Endpoint == "" || c.Target == "" {
		return fmt.Errorf("cdp.endpoint and cdp.target must be set (agentctl calibrate AGENT --cdp finds them)")
	}
	if err := loopback.CheckEndpoint(c.Endpoint); err != nil {
		return fmt.Errorf("cdp.endpoint: %w", err)
	}
	if _, err := regexp.Compile(c.Target); err != nil {
		return fmt.Errorf("cdp.target: not a regular expression: %v", err)
	}
	if c.Quiet < 0 {
		return fmt.Errorf("cdp.quiet: must be a positive duration such as 30ms")
	}
	if c.Read != "" && c.Read != ReadCopy && c.Read != ReadRendered {
		return fmt.Errorf("cdp.read: %q is neither %s nor %s", c.Read, ReadCopy, ReadRendered)
	}
	if c.Clipboard != "" && c.Clipboard != ClipboardPage && c.Clipboard != ClipboardSystem {
		return fmt.Errorf("cdp.clipboard: %q is neither %s nor %s", c.Clipboard, ClipboardPage, ClipboardSystem)
	}
	if c.Busy == NoBusy && c.Quiet == 0 {
		return fmt.Errorf("cdp.quiet: must be set when cdp.busy is %q: with no busy element, the reply counts as done once it has been still that long, so make it longer than any pause the model makes (such as 10s)", NoBusy)
	}
	return nil
}

// pageLook is what jsLook reports.
type pageLook struct {
	Title    string  `json:"title"`
	Token    string  `json:"token"`
	Busy     bool    `json:"busy"`
	BusySeen bool    `json:"busy_seen"`
	Changes  int     `json:"changes"`
	StillMS  float64 `json:"still_ms"`
	Settled  bool    `json:"settled"`
	Replies  int     `json:"replies"`
	Composer *string `json:"composer"`
	Nodes    int     `json:"nodes"`
	// EnterTaken: the page's key handling took the driver's last Enter.
	EnterTaken bool `json:"enter_taken"`
	// EnterCalmMS is how long the page has run its timers on time since
	// that Enter: a page still at work on it runs them late.
	EnterCalmMS float64 `json:"enter_calm_ms"`
}

func (c *CDP) logf(format string, args ...any) { fmt.Fprintf(c.log, format+"\n", args...) }

// Run takes one turn. See CDP.
func (c *CDP) Run(ctx context.Context, t Turn) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.turn)
	defer cancel()
	target, err := findPage(ctx, c.cfg.Endpoint, c.title)
	if err != nil {
		return "", err
	}
	p, err := dialPage(ctx, c.cfg.Endpoint, target)
	if err != nil {
		return "", err
	}
	defer p.close()
	c.logf("page %q found", target.Title)
	s := &cdpTurn{c: c, p: p, t: t, token: newSentinel(), stored: t.Prompt}
	reply, err := s.run(ctx)
	if err != nil && ctx.Err() != nil && !isPageClosed(err) &&
		(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		err = s.stopped(ctx, target.Title)
	}
	return reply, err
}

// stopped says what a turn whose context ended was waiting for, whether
// the deadline struck between looks or during a call to the page.
func (s *cdpTurn) stopped(ctx context.Context, title string) error {
	sent := "nothing was sent"
	if s.sent {
		sent = "the prompt had been sent"
	}
	if ctx.Err() == context.DeadlineExceeded {
		why := ErrNoReply
		if s.waitErr != nil {
			why = s.waitErr
		}
		return fmt.Errorf("%w: the turn's time (gui.turn_timeout %s) ran out on page %q while waiting for %s; %s: %w",
			why, s.c.turn, title, s.waiting, sent, ctx.Err())
	}
	return fmt.Errorf("turn of page %q stopped while waiting for %s (%s): %w", title, s.waiting, sent, context.Cause(ctx))
}

// cdpTurn is one turn on one page.
type cdpTurn struct {
	c     *CDP
	p     *page
	t     Turn
	token string
	sent  bool // the prompt may have reached the model
	// stored is the prompt as the composer holds it (a textarea stores
	// CRLF as LF), which is what the page echoes.
	stored string
	// kind is the composer's kind (see composerMonaco), once known.
	kind string
	// waiting names what the turn waits for now, and waitErr the error a
	// deadline striking then ends it with (nil: ErrNoReply).
	waiting string
	waitErr error
}

// wait records what the turn waits for from here on, for the error of a
// deadline that strikes meanwhile.
func (s *cdpTurn) wait(why error, format string, args ...any) {
	s.waitErr, s.waiting = why, fmt.Sprintf(format, args...)
}

func (s *cdpTurn) args() map[string]any {
	return map[string]any{"composer": s.c.cfg.Composer, "busy": s.c.busySelector(), "reply": s.c.cfg.Reply,
		"copy": s.c.cfg.Copy, "token": s.token}
}

// look reads the page and refuses a page that is no longer the agent's
// (another title) or no longer the one the turn began with (reloaded).
func (s *cdpTurn) look(ctx context.Context) (pageLook, error) {
	return s.lookFor(ctx, nil)
}

// lookFor is look with extra arguments for jsLook (the stillness that
// arms its probe).
func (s *cdpTurn) lookFor(ctx context.Context, extra map[string]any) (pageLook, error) {
	var l pageLook
	a := s.args()
	for k, v := range extra {
		a[k] = v
	}
	if err := s.p.eval(ctx, jsLook, a, &l); err != nil {
		return l, s.failed(err)
	}
	return l, s.confirm(l)
}

// confirm refuses a look at a page that is no longer the turn's.
func (s *cdpTurn) confirm(l pageLook) error {
	if l.Token != s.token {
		return s.navigated()
	}
	if !s.c.title.MatchString(l.Title) {
		return fmt.Errorf("%w: the page's title became %q, which cdp.target %q does not match", ErrWindowNotConfirmed, l.Title, s.c.cfg.Target)
	}
	return nil
}

func (s *cdpTurn) failed(err error) error {
	if isPageClosed(err) && s.sent {
		return fmt.Errorf("%w during the turn, after the prompt was sent", err)
	}
	if errors.Is(err, errPageNavigated) {
		return s.navigated()
	}
	return err
}

// navigated is the error of a turn whose page reloaded or navigated.
func (s *cdpTurn) navigated() error {
	if s.sent {
		return fmt.Errorf("%w: the page reloaded or navigated during the turn, after the prompt was sent", ErrReplyLost)
	}
	return fmt.Errorf("%w: the page reloaded or navigated before the prompt was sent; nothing was sent", ErrWindowNotConfirmed)
}

func (s *cdpTurn) run(ctx context.Context) (string, error) {
	s.wait(ErrNotCalibrated, "the page to answer a check of the seat's selectors")
	prep, err := s.prepare(ctx, !s.t.Resume && !s.t.NewChat)
	if err != nil {
		return "", err
	}
	if s.t.Resume {
		s.sent = true
		if !prep.Kept {
			// Its replies from before the prompt are no longer told from
			// new ones: the last one shown may be any of them.
			return "", fmt.Errorf("%w: the page reloaded or navigated since the prompt was sent, so its reply cannot be told from older ones", ErrReplyLost)
		}
		s.c.logf("resuming: waiting for the reply of a prompt sent before")
		return s.await(ctx, decodeState(s.t.ResumeState))
	}
	l := prep.Look
	if l.Composer == nil {
		return "", fmt.Errorf("%w: cdp.composer %q matches nothing on page %q; nothing was sent", ErrNotCalibrated, s.c.cfg.Composer, l.Title)
	}
	if s.c.cfg.Submit != "" && prep.Counts["cdp.submit"] == 0 {
		return "", fmt.Errorf("%w: cdp.submit %q matches nothing on page %q; nothing was sent", ErrNotCalibrated, s.c.cfg.Submit, l.Title)
	}
	if s.t.NewChat {
		if err := s.newChat(ctx); err != nil {
			return "", err
		}
	}
	state := turnState{PrevKnown: true}
	before := l
	if !prep.Marked {
		if before, err = s.mark(ctx, &state); err != nil {
			return "", err
		}
	}
	if err := s.insert(ctx); err != nil {
		return "", err
	}
	if err := s.t.stage(StageInjected); err != nil {
		return "", err
	}
	if s.t.OnResumeState != nil {
		if err := s.t.OnResumeState(state.encode()); err != nil {
			return "", err
		}
	}
	if err := s.submit(ctx, before); err != nil {
		return "", err
	}
	if err := s.t.stage(StageSubmitted); err != nil {
		return "", err
	}
	reply, err := s.await(ctx, state)
	if err != nil {
		return "", err
	}
	if err := s.t.stage(StageReplied); err != nil {
		return "", err
	}
	return reply, nil
}

// prepared is what prepare found.
type prepared struct {
	Counts map[string]int `json:"counts"`
	Look   pageLook       `json:"look"`
	// Marked: the page's replies are marked as being from before the
	// prompt (see mark), and Kind is the composer's.
	Marked bool   `json:"marked"`
	Kind   string `json:"kind"`
	// Kept: the page still holds marks of an earlier turn's; one without
	// them was reloaded (or is another page) since they were made.
	Kept bool `json:"kept"`
}

// prepare checks the seat's selectors (refusing one that is not valid
// CSS before anything is sent: the page would throw at it mid-turn),
// starts watching the page and waits until the model is not busy (with
// an earlier prompt, or one a person typed: a prompt sent now would be
// refused or queued). With markNow, where the last reply is in a
// numbered row, it also marks the replies on the page and finds the
// composer's kind: all of it in one call to the page, where a turn's
// time before its prompt goes.
func (s *cdpTurn) prepare(ctx context.Context, markNow bool) (prepared, error) {
	a := s.args()
	a["sels"], a["markNow"] = s.c.selectorSettings(), markNow
	for said := false; ; {
		var r prepared
		if err := s.p.eval(ctx, jsPrepare, a, &r); err != nil {
			return r, s.failed(err)
		}
		if err := s.c.validSelectors(r.Counts); err != nil {
			return r, err
		}
		if err := s.confirm(r.Look); err != nil {
			return r, err
		}
		if r.Marked {
			s.kind = r.Kind
		}
		if !r.Look.Busy || s.t.Resume {
			return r, nil
		}
		if !said {
			s.wait(ErrNoReply, "the chat to stop being busy (cdp.busy %q) before the prompt could be sent", s.c.cfg.Busy)
			s.c.logf("the chat is busy; waiting for it before sending")
			said = true
		}
		if err := realSleep(ctx, cdpPoll*4); err != nil {
			return r, err
		}
	}
}

// mark marks the replies on the page as being from before the prompt, so
// that only a reply element not on the page now is new, and watches
// afresh, so that only a busy state after the prompt counts. Where the
// last reply is not in a numbered row, the reply from before is read
// first, so that its text can be told from the new one's (see
// judgeReply): the copy action that costs (VS Code's menu: tens of ms)
// is spent only there. It returns a look at the page after.
func (s *cdpTurn) mark(ctx context.Context, state *turnState) (pageLook, error) {
	s.wait(ErrNoReply, "the reply from before the prompt to be read")
	var numbered bool
	if err := s.p.eval(ctx, jsNumbered, s.args(), &numbered); err != nil {
		return pageLook{}, s.failed(err)
	}
	if !numbered {
		prev, err := s.read(ctx)
		if err != nil {
			return pageLook{}, err
		}
		if prev.Text != "" {
			state.Prev = fingerprintText(prev.Text)
		}
	}
	a := s.args()
	a["mark"] = true
	if err := s.p.eval(ctx, jsWatch, a, nil); err != nil {
		return pageLook{}, err
	}
	return s.look(ctx)
}

func (s *cdpTurn) newChat(ctx context.Context) error {
	s.wait(ErrNotSubmitted, "a new chat (cdp.new_chat %q)", s.c.cfg.NewChat)
	var ok bool
	if err := s.p.eval(ctx, jsClick, map[string]any{"sel": s.c.cfg.NewChat}, &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: cdp.new_chat %q matches nothing visible; nothing was sent", ErrNotCalibrated, s.c.cfg.NewChat)
	}
	s.c.logf("new chat started")
	return realSleep(ctx, settleWait)
}

// submit sends the prompt and proves that the page took it: the busy
// element showed, or the composer emptied and the transcript grew. With no
// sign within gui.submit it tries once more, but only while the composer
// still holds the prompt, so nothing is ever sent twice; and where the
// page took the first Enter (its key handling prevented the key's
// default), only once the page has run its timers on time for
// submitTakenWaits such periods since: a page that took the key and is
// still at work on it (VS Code's, slowed thirtyfold on a loaded machine,
// showed the prompt sent after more than ten seconds) would send the
// prompt again. A page never calm that long (its timers late for want of
// CPU, the key lost all the same) gets the second Enter submitTakenCap
// periods after the first, and is then waited for while it is at work.
func (s *cdpTurn) submit(ctx context.Context, before pageLook) error {
	// Once the key may have gone, a turn whose time runs out does not know
	// whether the page took the prompt.
	s.wait(ErrSubmitUnknown, "a sign that the page took the prompt (the model busy, or the composer emptied and the transcript grown)")
	if err := s.t.stage(StagePressed); err != nil {
		return err
	}
	for try := 1; try <= 2; try++ {
		if err := s.press(ctx); err != nil {
			if try == 2 && errors.Is(err, ErrNotSubmitted) {
				// The first press may have gone after the look that
				// showed the prompt still in the composer (a starved
				// page swapping its send button for stop).
				return fmt.Errorf("%w: the second press failed: %v", ErrSubmitUnknown, err)
			}
			return err
		}
		s.sent = true
		pressed := time.Now()
		deadline, waitedTaken := pressed.Add(s.c.submitWait), false
		for {
			l, err := s.look(ctx)
			if err != nil {
				return err
			}
			empty := l.Composer == nil || strings.TrimSpace(*l.Composer) == ""
			grew := l.Nodes != before.Nodes || l.Replies != before.Replies || l.Changes != before.Changes
			switch {
			case l.Busy || l.BusySeen:
				s.c.logf("submitted (the page shows the model busy)")
				return nil
			case empty && grew:
				s.c.logf("submitted (the composer emptied and the transcript grew)")
				return nil
			}
			calm := time.Duration(l.EnterCalmMS * float64(time.Millisecond))
			// After the second Enter no third follows: a page at work on
			// it is waited for as long as the turn lasts.
			atWork := l.EnterTaken && calm < submitTakenWaits*s.c.submitWait
			capped := try == 1 && time.Since(pressed) >= submitTakenCap*s.c.submitWait
			if time.Now().After(deadline) && atWork && !capped {
				if !waitedTaken {
					until := fmt.Sprintf("it has been idle for %s", submitTakenWaits*s.c.submitWait)
					if try == 1 {
						until += fmt.Sprintf(" (at most %s)", submitTakenCap*s.c.submitWait)
					}
					s.c.logf("no sign of submission yet, but the page took the Enter and is at work; waiting until %s rather than pressing it again", until)
					waitedTaken = true
				}
			} else if time.Now().After(deadline) {
				waited := time.Since(pressed).Round(time.Millisecond)
				holds := l.Composer != nil && s.holdsPrompt(*l.Composer)
				switch {
				case try == 1 && holds:
					if atWork {
						s.c.logf("no sign of submission %s after the Enter, and the page is still at work on it; sending once more", waited)
					} else {
						s.c.logf("no sign of submission %s after the Enter; sending once more", waited)
					}
					s.sent = false
				case holds:
					return fmt.Errorf("%w: the composer still holds the prompt %s after the second Enter, and the page showed no other sign of it", ErrNotSubmitted, waited)
				default:
					return fmt.Errorf("%w: the page showed no sign of it within %s of the Enter, and the composer no longer holds it", ErrSubmitUnknown, waited)
				}
				break
			}
			if err := realSleep(ctx, cdpPoll); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("%w: the page showed no sign of it", ErrSubmitUnknown)
}

// submitTakenWaits is how many gui.submit periods a page that took the
// Enter key must have been idle, with no sign of the prompt sent, before
// the key is pressed again; submitTakenCap, how many after the Enter it
// is pressed again all the same.
const (
	submitTakenWaits = 5
	submitTakenCap   = 30
)

func (s *cdpTurn) press(ctx context.Context) error {
	if s.c.cfg.Submit != "" {
		var ok bool
		if err := s.p.eval(ctx, jsClick, map[string]any{"sel": s.c.cfg.Submit}, &ok); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: cdp.submit %q matches nothing visible; the prompt is in the composer, not sent", ErrNotSubmitted, s.c.cfg.Submit)
		}
		return nil
	}
	var ok bool
	a := s.args()
	a["watch_ms"] = s.c.turn.Milliseconds()
	if err := s.p.eval(ctx, jsFocus, a, &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: cdp.composer %q went away; nothing was sent", ErrNotSubmitted, s.c.cfg.Composer)
	}
	return s.p.pressEnter(ctx)
}

// selectorSettings names the seat's selectors as agentctl.yaml does.
func (c *CDP) selectorSettings() map[string]string {
	return map[string]string{"cdp.composer": c.cfg.Composer, "cdp.submit": c.cfg.Submit, "cdp.busy": c.busySelector(),
		"cdp.reply": c.cfg.Reply, "cdp.copy": c.cfg.Copy, "cdp.new_chat": c.cfg.NewChat, "cdp.body": c.cfg.Body, "cdp.error": c.cfg.Error}
}

// selectorCounts returns how many elements of the page each selector set
// matches now, -1 for one that is not valid CSS.
func selectorCounts(ctx context.Context, p *page, sels map[string]string) (map[string]int, error) {
	var r struct {
		Counts map[string]int `json:"counts"`
	}
	if err := p.eval(ctx, jsCheck, map[string]any{"sels": sels}, &r); err != nil {
		return nil, err
	}
	return r.Counts, nil
}

// validSelectors refuses a seat with a selector that is not valid CSS,
// given the counts of jsCheck.
func (c *CDP) validSelectors(counts map[string]int) error {
	for _, name := range []string{"cdp.composer", "cdp.submit", "cdp.busy", "cdp.reply", "cdp.copy", "cdp.new_chat", "cdp.body", "cdp.error"} {
		if counts[name] == -1 {
			return fmt.Errorf("%w: %s %q is not a valid CSS selector; nothing was sent", ErrNotCalibrated, name, c.selectorSettings()[name])
		}
	}
	return nil
}

// busySelector is cdp.busy as the page scripts take it: "" for a seat
// whose page shows nothing while the model works.
func (c *CDP) busySelector() string {
	if c.cfg.Busy == NoBusy {
		return ""
	}
	return c.cfg.Busy
}
