// Figures: what a remote agent costs against a local one, end to end, with
// real parts: an embedded NATS server on loopback, real mailboxes, real
// runners (package agents) and seats, and a command that answers "ok".
//
//	go test -run '^$' -bench . ./agents/hub/
//	go test -run '^$' -bench Delivery -benchtime 200x ./agents/hub/   # p99 worth reading
//
// BenchmarkDelivery reports p50-ms and p99-ms from mailbox.Deliver on the
// hub to the receipt's completion, one message at a time, for a runner
// that runs the command itself (local) and for one whose seat runs it over
// NATS (remote). BenchmarkThroughput8Remote reports msgs/s through 8
// agents at once, remote and local.
//
// On a 2-core machine, quiet: delivery p50 about 4 ms local and 7 ms
// remote, p99 8 and 17 ms; 8 agents about 350 msgs/s local, 200 remote.
// Busy (load 3-4): p50 6-9 ms local, 10-15 ms remote; 170-230 and 100-160
// msgs/s. A remote turn adds the ask's and the answer's round trips to the
// server (under a millisecond each on loopback) and the seat's journal,
// three synced writes per turn; the server syncs every message too.
package hub_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/agents/hub/hubserver"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

// benchSender is the mailbox the benchmark's messages come from.
const benchSender = "Bench"

// BenchmarkDelivery measures one message at a time, local and remote.
func BenchmarkDelivery(b *testing.B) {
	for _, remote := range []bool{false, true} {
		b.Run(benchKind(remote), func(b *testing.B) {
			sw := newBenchSwarm(b, 1, remote)
			agent := sw.agents[0]
			sent := make(map[string]time.Time, b.N)
			b.ResetTimer()
			for i := range b.N {
				id := fmt.Sprintf("lat-%d", i)
				sent[id] = time.Now()
				sw.deliver(id, agent)
				sw.waitDone(1 + i + 1) // the warm-up message, then these
			}
			b.StopTimer()
			var lat []time.Duration
			for _, e := range sw.archived(agent) {
				if at, ok := sent[e.Message.ID]; ok {
					lat = append(lat, e.Receipt.CompletedAt.Sub(at))
				}
			}
			if len(lat) != b.N {
				b.Fatalf("%d of %d messages archived with a receipt", len(lat), b.N)
			}
			slices.Sort(lat)
			p50, p99 := benchMs(lat[len(lat)/2]), benchMs(lat[len(lat)*99/100])
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.Logf("%s delivery, %d messages one at a time: p50 %.1f ms, p99 %.1f ms", benchKind(remote), b.N, p50, p99)
		})
	}
}

// throughputBatch is one iteration of BenchmarkThroughput8Remote: this many
// messages delivered at once, spread evenly over the agents.
const throughputBatch = 160

// BenchmarkThroughput8Remote measures batches spread over 8 agents, with
// 8 seats (remote) and with 8 runners running the command (local).
func BenchmarkThroughput8Remote(b *testing.B) {
	for _, remote := range []bool{true, false} {
		b.Run(benchKind(remote), func(b *testing.B) {
			sw := newBenchSwarm(b, 8, remote)
			var busy time.Duration
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				for j := range throughputBatch {
					sw.deliver(fmt.Sprintf("tp-%d-%d", i, j), sw.agents[j%len(sw.agents)])
				}
				sw.waitDone(len(sw.agents) + (i+1)*throughputBatch)
				busy += time.Since(start)
			}
			b.StopTimer()
			rate := float64(b.N*throughputBatch) / busy.Seconds()
			b.ReportMetric(rate, "msgs/s")
			b.Logf("%s throughput, %d agents, %d messages: %.0f msgs/s", benchKind(remote), len(sw.agents), b.N*throughputBatch, rate)
		})
	}
}

// benchSwarm is a hub's runtime folder with runners for some agents, each
// either running the command itself or asking its seat, which has its own
// runtime folder and connection, as on another machine.
type benchSwarm struct {
	b      *testing.B
	root   string
	agents []string
	boxes  map[string]*mailbox.Mailbox
}

func newBenchSwarm(b *testing.B, n int, remote bool) *benchSwarm {
	b.Helper()
	sw := &benchSwarm{b: b, root: b.TempDir(), boxes: map[string]*mailbox.Mailbox{}}
	for i := range n {
		sw.agents = append(sw.agents, fmt.Sprintf("Agent-%d", i+1))
	}
	for _, a := range append([]string{benchSender}, sw.agents...) {
		if err := mailbox.Create(sw.root, a); err != nil {
			b.Fatal(err)
		}
	}
	for _, a := range sw.agents {
		mb, err := mailbox.Open(sw.root, a)
		if err != nil {
			b.Fatal(err)
		}
		sw.boxes[a] = mb
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	goRun := func(what string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil && ctx.Err() == nil {
				b.Errorf("%s stopped: %v", what, err)
			}
		}()
	}
	var hubConn *nats.Conn
	if remote {
		srv, err := hubserver.StartServer(hubconf.Settings{Name: "bench", Listen: "127.0.0.1:0", StoreDir: filepath.Join(sw.root, "hub", "jetstream")}, zerolog.Nop())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Shutdown) // after the runners and seats have stopped
		connect := func(name string) *nats.Conn {
			nc, err := hub.Connect(ctx, hub.ClientSettings{URLs: []string{srv.ClientURL()}, Name: name, Log: zerolog.Nop()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(nc.Close)
			return nc
		}
		hubConn = connect("bench hub")
		js, err := jetstream.New(hubConn)
		if err != nil {
			b.Fatal(err)
		}
		if err := hub.EnsureStreams(ctx, js, 1); err != nil {
			b.Fatal(err)
		}
		for _, a := range sw.agents {
			dir, err := hub.JournalDir(b.TempDir(), a)
			if err != nil {
				b.Fatal(err)
			}
			journal, err := hub.OpenJournal(dir)
			if err != nil {
				b.Fatal(err)
			}
			seat := hub.SeatSettings{Agent: a, Machine: "seat-" + a, Driver: benchCommand(b), Journal: journal, Conn: connect("bench seat of " + a), Log: zerolog.Nop()}
			goRun("seat of "+a, func() error { return hub.RunSeat(ctx, seat) })
		}
	}
	for _, a := range sw.agents {
		d := benchCommand(b)
		if remote {
			hd, err := hub.NewDriver(ctx, hubConn, a, zerolog.Nop())
			if err != nil {
				b.Fatal(err)
			}
			d = hd
		}
		r, err := agents.New(benchRunnerSettings(sw.root, a, append([]string{benchSender}, sw.agents...), d))
		if err != nil {
			b.Fatal(err)
		}
		goRun("runner of "+a, func() error { return r.Run(ctx) })
	}
	b.Cleanup(func() { cancel(); wg.Wait() })

	// One message each first, so that start-up (watches, consumers, the
	// seats' first fetch) is not measured.
	for _, a := range sw.agents {
		sw.deliver("warm-up-"+a, a)
	}
	sw.waitDone(len(sw.agents))
	return sw
}

// benchCommand is the agent: a real process that reads the prompt and
// answers with a reply carrying no effects.
func benchCommand(b *testing.B) cursor.Driver {
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"sh", "-c", "cat >/dev/null; echo ok"}})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// benchRunnerSettings are agentctl.yaml's defaults as a runner gets them.
func benchRunnerSettings(root, agent string, all []string, d cursor.Driver) agents.Settings {
	def := config.Default()
	return agents.Settings{
		Root: root, Agent: agent, Agents: all, Driver: d,
		Consumer:       mailbox.Options{Known: all, MaxAttempts: 3},
		Heartbeat:      def.Run.Heartbeat.D(),
		MaxPromptBytes: def.Run.MaxPromptBytes,
		ShutdownGrace:  time.Second,
		Resend:         true,
		TemplatesDir:   filepath.Join(root, "templates"),
		Recovery: agents.RecoverySettings{
			Lease: def.Recovery.Lease.D(), StaleAfter: def.Recovery.StaleAfter.D(), StallAfter: def.Recovery.StallAfter.D(),
			Cron: agents.CronSpecs{Rescan: def.Recovery.Cron.Rescan, Expire: def.Recovery.Cron.Expire, Stall: def.Recovery.Cron.Stall, Requeue: def.Recovery.Cron.Requeue},
		},
		Log: zerolog.Nop(),
	}
}

func (sw *benchSwarm) deliver(id, to string) {
	m := mailbox.Message{ID: id, From: benchSender, To: to, Subject: "ping", Body: "ping", Priority: mailbox.Normal, CreatedAt: time.Now().UTC()}
	if err := sw.boxes[to].Deliver(m); err != nil {
		sw.b.Fatal(err)
	}
}

// waitDone waits until the agents' archives hold n messages in all. A
// dead-lettered message fails the benchmark: its figure would be a lie.
func (sw *benchSwarm) waitDone(n int) {
	deadline := time.Now().Add(time.Minute)
	for {
		done := 0
		for _, mb := range sw.boxes {
			c, err := mb.Count()
			if err != nil {
				sw.b.Fatal(err)
			}
			if c.Dead > 0 {
				dead, _ := mb.List(mailbox.StateDead)
				sw.b.Fatalf("%s dead-lettered %d messages: %+v", mb.Agent, c.Dead, dead)
			}
			done += c.Done
		}
		if done >= n {
			return
		}
		if time.Now().After(deadline) {
			sw.b.Fatalf("timed out waiting for %d messages archived (%d are)", n, done)
		}
		// Look rarely: counting lists folders, and competes with the runners.
		time.Sleep(2 * time.Millisecond)
	}
}

// archived are agent's archived messages that have a receipt.
func (sw *benchSwarm) archived(agent string) []mailbox.Entry {
	done, err := sw.boxes[agent].List(mailbox.StateDone)
	if err != nil {
		sw.b.Fatal(err)
	}
	return slices.DeleteFunc(done, func(e mailbox.Entry) bool { return e.Receipt == nil })
}

func benchKind(remote bool) string {
	if remote {
		return "remote"
	}
	return "local"
}

func benchMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
