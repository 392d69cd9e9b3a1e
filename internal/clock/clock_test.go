package clock

import (
	"testing"
	"time"
)

func TestFixedReadsOneTime(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	f := Fixed(at)
	if !f.Now().Equal(at) || !Or(f).Now().Equal(at) {
		t.Fatalf("Now = %v", f.Now())
	}
	if got := <-f.At(at.Add(-time.Second)); !got.Equal(at) {
		t.Fatalf("a time already reached: %v", got)
	}
	select {
	case <-f.At(at.Add(time.Nanosecond)):
		t.Fatal("a fixed clock reached a later time")
	default:
	}
	if Or(nil) != System {
		t.Fatal("Or(nil) is not the wall clock")
	}
}
