package supervise

import (
	"testing"
	"time"
)

func TestNextBacksOffAndTellsOnce(t *testing.T) {
	p := Policy{MinBackoff: time.Second, MaxBackoff: 10 * time.Second, Stable: time.Minute, NoticeAfter: 3}
	var delays []time.Duration
	var notified []int
	deaths := 0
	for range 6 {
		v := Next(p, deaths, time.Second, false, false)
		deaths = v.Deaths
		delays = append(delays, v.Delay)
		if v.Notify {
			notified = append(notified, v.Deaths)
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays %v, want %v", delays, want)
		}
	}
	if len(notified) != 1 || notified[0] != 3 {
		t.Fatalf("notified at deaths %v, want once at 3", notified)
	}
}

func TestNextStartsANewCountAfterAStableRun(t *testing.T) {
	p := Policy{MinBackoff: time.Second, MaxBackoff: time.Minute, Stable: time.Minute, NoticeAfter: 2}
	if v := Next(p, 7, 2*time.Minute, false, false); v.Deaths != 1 || v.Delay != time.Second || v.Notify {
		t.Fatalf("after a stable run: %+v, want a first death", v)
	}
	if v := Next(p, 7, time.Second, true, false); v.Deaths != 0 || v.Delay != time.Second || v.Notify {
		t.Fatalf("after a clean exit: %+v, want the count ended", v)
	}
}

func TestNextParksAChildThatNeedsAPerson(t *testing.T) {
	p := DefaultPolicy()
	if v := Next(p, 4, time.Second, false, true); !v.Park || v.Notify || v.Delay != 0 {
		t.Fatalf("after ExitNeedsPerson: %+v, want parked", v)
	}
}
