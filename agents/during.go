package agents

import (
	"sync"
	"time"
)

// during runs tick every interval on a goroutine of its own while a turn
// lasts (the turn holds the runner's goroutine), until tick returns true or
// the returned stop is called; stop waits for the goroutine to end.
func during(interval time.Duration, tick func() (done bool)) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if tick() {
					return
				}
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}
