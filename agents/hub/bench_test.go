// Figures: what a remote agent costs against a local one, end to end, with
// real parts: an embedded NATS server on loopback, real mailboxes, real
// runners (package agents) and seats, and a command that answers "ok".
//
//	go test -run '^$' -bench . ./agents/hub/
//	go test -run '^$' -bench Delivery -benchtime 200x ./agents/hub/   # p99 worth reading
//
// BenchmarkDelivery reports p50 and p99 from mailbox.Deliver on the hub to
// the receipt's completion, one message at a time, for a runner that runs
// the command itself (local) and for one whose seat runs it over NATS
// (remote), taking turns in one loop; ratio is remote's p50 over local's.
// BenchmarkThroughput8Remote reports msgs/s through 8 agents at once,
// remote and local in turn; throughput-ratio is remote's over local's.
// Read the ratios: the machine's load moves both sides alike.
//
// On a 2-core machine at load 5-9: delivery p50 5-6 ms local and 6-8 ms
// remote (ratio 1.3), p99 14-49 and 27-29 ms; 8 agents 150-190 msgs/s
// local and 105-155 remote (throughput-ratio 0.7-0.8). At load 20-30 the
// ratios were 1.4 and 0.66.
//
// A remote turn adds the ask's and the answer's hops through the server,
// the server's synced write of the ask, and the seat's journal, two synced
// writes per turn (started, answered). The answer goes straight to the
// waiting runner, not through the replies stream, when it is there.
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

// BenchmarkDelivery measures one message at a time, local and remote,
// taking turns in the same loop so that both see the same load: each
// iteration sends one message to the local runner and one to the remote
// seat, in alternating order. The ratio (µs/measure, remote, over
// µs/anchor, local, at p50) is what to read on a busy machine.
func BenchmarkDelivery(b *testing.B) {
	local, remote := newBenchSwarm(b, 1, false), newBenchSwarm(b, 1, true)
	sent := map[*benchSwarm]map[string]time.Time{local: {}, remote: {}}
	b.ResetTimer()
	for i := range b.N {
		order := []*benchSwarm{local, remote}
		if i%2 == 1 {
			order = []*benchSwarm{remote, local}
		}
		for _, sw := range order {
			id := fmt.Sprintf("lat-%d", i)
			sent[sw][id] = time.Now()
			sw.deliver(id, sw.agents[0])
			sw.waitDone(1 + i + 1) // the warm-up message, then these
		}
	}
	b.StopTimer()
	p50, p99 := map[*benchSwarm]float64{}, map[*benchSwarm]float64{}
	for _, sw := range []*benchSwarm{local, remote} {
		var lat []time.Duration
		for _, e := range sw.archived(sw.agents[0]) {
			if at, ok := sent[sw][e.Message.ID]; ok {
				lat = append(lat, e.Receipt.CompletedAt.Sub(at))
			}
		}
		if len(lat) != b.N {
			b.Fatalf("%d of %d messages archived with a receipt", len(lat), b.N)
		}
		slices.Sort(lat)
		p50[sw], p99[sw] = benchMs(lat[len(lat)/2]), benchMs(lat[len(lat)*99/100])
		b.Logf("%s delivery, %d messages one at a time: p50 %.1f ms, p99 %.1f ms", sw.kind(), b.N, p50[sw], p99[sw])
	}
	b.ReportMetric(p50[local], "p50-ms-local")
	b.ReportMetric(p99[local], "p99-ms-local")
	b.ReportMetric(p50[remote], "p50-ms-remote")
	b.ReportMetric(p99[remote], "p99-ms-remote")
	b.ReportMetric(p50[remote]*1000, "µs/measure")
	b.ReportMetric(p50[local]*1000, "µs/anchor")
	b.ReportMetric(p50[remote]/p50[local], "ratio")
	b.ReportMetric(p99[remote]/p99[local], "p99-ratio")
}

// throughputBatch is one iteration of BenchmarkThroughput8Remote: this many
// messages delivered at once, spread evenly over the agents.
const throughputBatch = 160

// BenchmarkThroughput8Remote measures batches spread over 8 agents, with
// 8 seats (remote) and with 8 runners running the command (local), a
// batch each in turn in the same loop. µs/measure and µs/anchor are the
// time a message takes, remote and local, so ratio is local's throughput
// over remote's; throughput-ratio is remote's over local's.
func BenchmarkThroughput8Remote(b *testing.B) {
	local, remote := newBenchSwarm(b, 8, false), newBenchSwarm(b, 8, true)
	busy := map[*benchSwarm]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		order := []*benchSwarm{local, remote}
		if i%2 == 1 {
			order = []*benchSwarm{remote, local}
		}
		for _, sw := range order {
			start := time.Now()
			for j := range throughputBatch {
				sw.deliver(fmt.Sprintf("tp-%d-%d", i, j), sw.agents[j%len(sw.agents)])
			}
			sw.waitDone(len(sw.agents) + (i+1)*throughputBatch)
			busy[sw] += time.Since(start)
		}
	}
	b.StopTimer()
	rate := map[*benchSwarm]float64{}
	for _, sw := range []*benchSwarm{local, remote} {
		rate[sw] = float64(b.N*throughputBatch) / busy[sw].Seconds()
		b.Logf("%s throughput, %d agents, %d messages: %.0f msgs/s", sw.kind(), len(sw.agents), b.N*throughputBatch, rate[sw])
	}
	b.ReportMetric(rate[local], "msgs/s-local")
	b.ReportMetric(rate[remote], "msgs/s-remote")
	b.ReportMetric(1e6/rate[remote], "µs/measure")
	b.ReportMetric(1e6/rate[local], "µs/anchor")
	b.ReportMetric(rate[local]/rate[remote], "ratio")
	b.ReportMetric(rate[remote]/rate[local], "throughput-ratio")
}

// benchSwarm is a hub's runtime folder with runners for some agents, each
// either running the command itself or asking its seat, which has its own
// runtime folder and connection, as on another machine.
type benchSwarm struct {
	b      *testing.B
	remote bool
	root   string
	agents []string
	boxes  map[string]*mailbox.Mailbox
}

func newBenchSwarm(b *testing.B, n int, remote bool) *benchSwarm {
	b.Helper()
	sw := &benchSwarm{b: b, remote: remote, root: b.TempDir(), boxes: map[string]*mailbox.Mailbox{}}
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
		if err := hub.EnsureStreams(ctx, js, 1, nil); err != nil {
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
// Swarms that never get there hang the benchmark until -timeout.
func (sw *benchSwarm) waitDone(n int) {
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

func (sw *benchSwarm) kind() string {
	if sw.remote {
		return "remote"
	}
	return "local"
}

func benchMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
