package clocktest

import (
	"testing"
	"time"
)

func TestWaitersWakeWhenTheClockReachesThem(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	c := New(start)
	if got := <-c.At(start); !got.Equal(start) {
		t.Fatalf("a time already reached: %v", got)
	}
	early, late := c.At(start.Add(time.Second)), c.At(start.Add(time.Minute))
	<-c.Sleeping()
	c.BlockUntil(2)
	c.Advance(time.Second)
	if got := <-early; !got.Equal(start.Add(time.Second)) {
		t.Fatalf("early woke at %v", got)
	}
	select {
	case got := <-late:
		t.Fatalf("late woke at %v, a minute early", got)
	default:
	}
	c.Advance(time.Hour)
	if got := <-late; !got.Equal(start.Add(time.Hour + time.Second)) {
		t.Fatalf("late woke at %v", got)
	}
	if !c.Now().Equal(start.Add(time.Hour + time.Second)) {
		t.Fatalf("Now = %v", c.Now())
	}
}

// BlockUntil returns only once as many loops sleep as it was told.
func TestBlockUntilCountsSleepers(t *testing.T) {
	c := New(time.Now())
	returned := make(chan struct{})
	go func() { c.BlockUntil(2); close(returned) }()
	c.At(c.Now().Add(time.Second))
	c.At(c.Now().Add(time.Second))
	<-returned
}
