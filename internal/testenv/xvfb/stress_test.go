package xvfb

import (
	"runtime"
	"sync"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// Test packages run in parallel and each starts and stops displays; no
// start may reach another's server. Left to pick the lowest free number,
// Xvfb failed this about one time in five.
func TestParallelStartsGetTheirOwnDisplays(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Xvfb runs on Linux only")
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				d, err := Start(ctx, Options{})
				if err != nil {
					t.Error(err)
					continue
				}
				if out, err := runWith(d.Env(), "xprop", "-root", "_NET_SUPPORTING_WM_CHECK"); err != nil {
					t.Errorf("xprop on %s: %v: %s", d.Name, err, out)
				}
				d.Stop()
			}
		}()
	}
	wg.Wait()
}
