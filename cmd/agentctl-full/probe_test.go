package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// probeCommand is the name under which the test binary, run as another
// account, tries what that account must not do (see probeAsOther).
const probeCommand = "agentctl-probe"

// probeAsOther tries, as whoever runs it, to use the hub and mission
// control and to read the secrets, and says line by line what it got
// ("GOT") or how it was refused.
func probeAsOther() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hubURL, serveURL := os.Getenv("PROBE_HUB"), os.Getenv("PROBE_SERVE")
	files := strings.Split(os.Getenv("PROBE_FILES"), "\n")

	try := func(what string, opts ...nats.Option) {
		opts = append(opts, nats.Timeout(30*time.Second))
		nc, err := nats.Connect(hubURL, opts...)
		if err != nil {
			fmt.Printf("%s: refused (%v)\n", what, err)
			return
		}
		defer nc.Close()
		err = nc.Publish("agentctl.deliver.Agent-1.Agent-2", []byte(`{"from":"human","body":"urgent"}`))
		if err == nil {
			err = nc.FlushWithContext(ctx)
		}
		fmt.Printf("%s: GOT a connection (publish: %v)\n", what, err)
	}
	try("hub anonymous")
	if opt, err := nats.NkeyOptionFromSeed(files[0]); err != nil {
		fmt.Printf("hub with the hub's seed: refused (%v)\n", err)
	} else {
		try("hub with the hub's seed", opt)
	}
	for _, p := range []string{"/", "/api/snapshot", "/api/events", "/api/messages?mailbox=human&state=pending"} {
		req, _ := http.NewRequestWithContext(ctx, "GET", serveURL+p, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Printf("GET %s: refused (%v)\n", p, err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			fmt.Printf("GET %s: GOT %d %q\n", p, resp.StatusCode, body)
		} else {
			fmt.Printf("GET %s: refused %d\n", p, resp.StatusCode)
		}
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err != nil {
			fmt.Printf("read %s: refused (%v)\n", f, err)
		} else {
			fmt.Printf("read %s: GOT %d bytes\n", f, len(data))
		}
	}
}
