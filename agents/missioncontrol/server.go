package missioncontrol

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

//go:embed web
var webFiles embed.FS

// Server serves the page, the snapshot and its live updates, and the
// actions. Every request but the login needs the token, as the session
// cookie the login sets or as a bearer header: the page shows every
// prompt and reply, which other accounts of the machine must not read.
// Requests from another origin, or addressed to a host name other than
// the one served, are refused (a page elsewhere, or a DNS rebinding,
// cannot drive the swarm).
type Server struct {
	Feed    *Feed
	Actions Actions
	Token   string
	// Keepalive is how long an event stream may stay idle, on the feed's
	// clock, before it gets a comment line, so proxies and browsers keep
	// it open.
	Keepalive time.Duration
}

// Handler routes the server's requests.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web")
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("GET /api/snapshot", s.snapshot)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/messages", s.messages)
	post := func(path string, act func(ctx context.Context, body []byte) (string, error)) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) { s.write(w, r, act) })
	}
	post("/api/send", func(ctx context.Context, b []byte) (string, error) {
		var req SendRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.Send(ctx, req) })
	})
	post("/api/retry", func(ctx context.Context, b []byte) (string, error) {
		var req RetryRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.Retry(ctx, req) })
	})
	post("/api/reply", func(ctx context.Context, b []byte) (string, error) {
		var req ReplyRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.Reply(ctx, req) })
	})
	post("/api/approve", func(ctx context.Context, b []byte) (string, error) {
		var req ApprovalRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.Approve(ctx, req) })
	})
	post("/api/deny", func(ctx context.Context, b []byte) (string, error) {
		var req ApprovalRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.Deny(ctx, req) })
	})
	post("/api/task", func(ctx context.Context, b []byte) (string, error) {
		var req TaskRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.SetTask(ctx, req) })
	})
	post("/api/skip", func(ctx context.Context, b []byte) (string, error) {
		var req SkipRequest
		return decodeThen(b, &req, func() (string, error) { return s.Actions.Skip(ctx, req) })
	})
	return s.guard(mux)
}

func decodeThen(body []byte, v any, then func() (string, error)) (string, error) {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "", badRequest{fmt.Errorf("cannot read the request: %w", err)}
	}
	return then()
}

type badRequest struct{ error }

// guard refuses what a loopback page never sends: a Host other than a
// loopback name or address (DNS rebinding), a cross-site fetch, an Origin
// that is not this server.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			refuse(w, http.StatusMisdirectedRequest, "this server answers to loopback addresses only", "open the URL agentctl serve printed")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
				refuse(w, http.StatusForbidden, "cross-origin request refused", "")
				return
			}
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			refuse(w, http.StatusForbidden, "cross-origin request refused", "")
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if r.URL.Path != "/login" && !s.authorized(r) {
			// Closed after the answer: a connection without the token
			// keeps no slot (LimitListener).
			w.Header().Set("Connection", "close")
			refuse(w, http.StatusUnauthorized, "mission control needs its token", "open the login link agentctl serve printed, or send the token in <root>/mission-control.token as Authorization: Bearer TOKEN")
			return
		}
		if r.URL.Path != "/login" {
			proven(r.Context())
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

type problem struct {
	Error string `json:"error"`
	Hint  string `json:"hint,omitempty"`
}

func refuse(w http.ResponseWriter, code int, msg, hint string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(problem{Error: msg, Hint: hint})
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	_, data, _, _ := s.Feed.Current()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data)
}

// messages answers a page of one folder of a mailbox, for what a
// snapshot leaves out: ?mailbox=Agent-3&state=dead&offset=50&limit=50.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := Page{Mailbox: q.Get("mailbox"), State: q.Get("state")}
	for _, n := range []struct {
		name string
		dst  *int
	}{{"offset", &p.Offset}, {"limit", &p.Limit}} {
		if v := q.Get(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < 0 {
				refuse(w, http.StatusBadRequest, n.name+" must be a whole number", "")
				return
			}
			*n.dst = i
		}
	}
	page, err := s.Feed.Page(r.Context(), p)
	if err != nil {
		refuse(w, http.StatusBadRequest, err.Error(), "ask for a mailbox the page shows and a state of pending, processing, done or dead")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(page)
}

// events streams the snapshot as server-sent events: the current one at
// once, then each new one as the feed publishes it.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		refuse(w, http.StatusInternalServerError, "streaming is not supported here", "")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	keepalive := s.Keepalive
	if keepalive <= 0 {
		keepalive = 25 * time.Second
	}
	var last uint64
	for {
		_, data, seq, changed := s.Feed.Current()
		if seq != last {
			if _, err := fmt.Fprintf(w, "event: snapshot\nid: %d\ndata: %s\n\n", seq, data); err != nil {
				return
			}
			flusher.Flush()
			last = seq
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-clock.After(s.Feed.opts.Clock, keepalive):
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// maxRequest bounds a write's body: a message is at most this long.
const maxRequest = 1 << 20

func (s *Server) write(w http.ResponseWriter, r *http.Request, act func(context.Context, []byte) (string, error)) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		refuse(w, http.StatusUnsupportedMediaType, "send JSON (Content-Type: application/json)", "")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequest))
	if err != nil {
		refuse(w, http.StatusRequestEntityTooLarge, "the request is too large", "")
		return
	}
	msg, err := act(r.Context(), body)
	if err != nil {
		code := http.StatusUnprocessableEntity
		var bad badRequest
		if errors.As(err, &bad) {
			code = http.StatusBadRequest
		}
		var h interface{ Hint() string }
		hint := ""
		if errors.As(err, &h) {
			hint = h.Hint()
		}
		refuse(w, code, err.Error(), hint)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// SessionCookie is the cookie the login sets: the token itself, which the
// browser keeps from scripts (HttpOnly) and never sends with a request
// another site starts (SameSite=Strict).
const SessionCookie = "agentctl_mc"

// authorized says whether r carries the token, as a bearer header or as
// the session cookie, compared in constant time.
func (s *Server) authorized(r *http.Request) bool {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.matches(got) {
		return true
	}
	c, err := r.Cookie(SessionCookie)
	return err == nil && s.matches(c.Value)
}

func (s *Server) matches(got string) bool {
	return s.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) == 1
}

// login trades the token of the link serve printed for the session
// cookie, and sends the browser on to the page without the token in its
// address bar or history.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.matches(r.URL.Query().Get("token")) {
		refuse(w, http.StatusUnauthorized, "this login link holds no valid token", "open the login link the running agentctl serve printed; a restarted serve makes a new one")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: s.Token, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
