package hub

import (
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// A hub that did not take an answer in time gets the seat's answers
// through the replies stream for handOverPause, by the seat's clock, and
// is then offered them straight again: one stall does not cost the direct
// path for the seat's life.
func TestSeatOffersAnswersStraightAgainAfterAPause(t *testing.T) {
	srv := testServer(t, "127.0.0.1:0", filepath.Join(t.TempDir(), "store"))
	clk := clocktest.New(time.Now())
	st := &seat{s: SeatSettings{Agent: "Agent-5", Conn: testConn(t, srv.ClientURL()), Clock: clk}, log: zerolog.Nop(),
		answerWait: 50 * time.Millisecond}
	var taking atomic.Bool
	hub := testConn(t, srv.ClientURL())
	if _, err := hub.Subscribe(answerSubject("Agent-5"), func(m *nats.Msg) {
		if taking.Load() {
			_ = m.Respond([]byte(answerTaken))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	ask := Ask{Turn: "msg-1#1", Ask: "ask-1"}

	if st.handOver(ctx, ask, []byte("{}")) {
		t.Fatal("a hub that did not answer took the answer")
	}
	taking.Store(true)
	// From here the hub takes what it is offered: no timing, only ctx
	// bounds a hang.
	st.answerWait = math.MaxInt64
	if st.handOver(ctx, ask, []byte("{}")) {
		t.Fatal("an answer was offered straight during the pause")
	}
	clk.Advance(handOverPause - time.Second)
	if st.handOver(ctx, ask, []byte("{}")) {
		t.Fatal("an answer was offered straight before the pause ended")
	}
	clk.Advance(time.Second)
	if !st.handOver(ctx, ask, []byte("{}")) {
		t.Fatal("after the pause the answer was not offered straight, or not taken")
	}
}
