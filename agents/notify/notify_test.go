package notify

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/mailbox"
)

var question = mailbox.Message{ID: "q-1", From: "Agent-2", To: "human", Type: "question", Priority: mailbox.High,
	Subject: "Which branch?", Body: "Rebase on main or on release?"}

// The webhook gets ntfy's shape: the body as plain text, the subject in
// Title, the priority in Priority, credentials from the URL as basic auth
// and the configured headers.
func TestWebhookPostsNtfyShape(t *testing.T) {
	type got struct {
		method, body, title, prio, user, pass, token string
		ok                                           bool
	}
	c := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u, p, ok := r.BasicAuth()
		c <- got{r.Method, string(b), r.Header.Get("Title"), r.Header.Get("Priority"), u, p, r.Header.Get("X-Token"), ok}
	}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http://", "http://me:s3cret@", 1) + "/agentctl"
	s := Settings{Webhook: url, Headers: map[string]string{"X-Token": "tk"}}
	if err := s.tell(context.Background(), "webhook", question); err != nil {
		t.Fatal(err)
	}
	g := <-c
	if g.method != "POST" || g.body != question.Body || !strings.Contains(g.title, "Which branch?") || g.prio != "high" {
		t.Errorf("the webhook got %+v", g)
	}
	if !g.ok || g.user != "me" || g.pass != "s3cret" || g.token != "tk" {
		t.Errorf("credentials: basic %v %q:%q, header %q", g.ok, g.user, g.pass, g.token)
	}
}

// A webhook that answers an error is a failure, and a password in its URL
// stays out of the error.
func TestWebhookFailureIsAnErrorWithoutThePassword(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	s := Settings{Webhook: srv.URL}
	if err := s.tell(context.Background(), "webhook", question); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a 403 gave %v", err)
	}
	srv.Close()
	s.Webhook = strings.Replace(srv.URL, "http://", "http://me:s3cret@", 1)
	err := s.tell(context.Background(), "webhook", question)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a closed server gave %v", err)
	}
}
