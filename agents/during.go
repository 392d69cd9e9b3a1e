package agents

import (
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

// during runs tick every interval of clk on a goroutine of its own while a
// turn lasts (the turn holds the runner's goroutine), until tick returns
// true or the returned stop is called; stop waits for the goroutine to end.
func during(clk clock.Clock, interval time.Duration, tick func() (done bool)) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := clk.Now().Add(interval)
		for {
			select {
			case <-quit:
				return
			case <-clk.At(next):
				if tick() {
					return
				}
				next = clk.Now().Add(interval)
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}
