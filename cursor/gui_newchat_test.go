//go:build linux && !nogui

package cursor

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A chat window's new-chat policy per thread: the first turn of each
// thread presses the new-chat key, the others continue the chat, and the
// next runner carries on from the record.
func TestGUINewChatPerThread(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-7", x: 10, y: 10})
	w := chat.window()
	w.NewChatKey = "ctrl+n"
	agent := Settings{Name: "Agent-7", Driver: DriverGUI, Window: w, NewChat: NewChatPolicy{PerThread: true}, KeepsConversation: true}
	sessions, locks := t.TempDir(), t.TempDir()
	run := func(d Driver, thread, prompt string) {
		t.Helper()
		reply, err := d.Run(context.Background(), Turn{Prompt: prompt, Thread: thread})
		if err != nil {
			t.Fatal(err)
		}
		if reply != "You wrote:\n"+prompt {
			t.Fatalf("reply = %q, want the stand-in's answer to %q", reply, prompt)
		}
	}
	d, err := New(withTimings(agent, testGUI()), Options{LockDir: locks, Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	run(d, "A", "a1")
	run(d, "A", "a2")
	run(d, "B", "b1")
	d.(interface{ Close() }).Close()

	restarted, err := New(withTimings(agent, testGUI()), Options{LockDir: locks, Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.(interface{ Close() }).Close()
	run(restarted, "B", "b2")

	if s := chatLog(t, chat); s != "new a1 a2 new b1 b2" {
		t.Errorf("the window saw %q, want %q", s, "new a1 a2 new b1 b2")
	}
	if c := readRecordOf(t, sessions, "Agent-7"); c.Kind != kindGUI || c.Thread != "B" || c.Turns != 2 || len(c.Previous) != 1 || c.Previous[0].Turns != 2 {
		t.Errorf("record = %+v", c)
	}
}

// chatLog is what a stand-in window saw: "new" for a new chat, and each
// prompt.
func chatLog(t *testing.T, chat *chatWindow) string {
	var got []string
	for _, e := range chat.events(t) {
		switch e["event"] {
		case "new_chat":
			got = append(got, "new")
		case "prompt":
			got = append(got, e["text"].(string))
		}
	}
	return strings.Join(got, " ")
}

// A turn resumed after its process died once the prompt was submitted
// never presses the new-chat key again, and is recorded in the
// conversation the first attempt started.
func TestGUINewChatNotOnResume(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-8", x: 440, y: 10})
	w := chat.window()
	w.NewChatKey = "ctrl+n"
	agent := Settings{Name: "Agent-8", Driver: DriverGUI, Window: w, NewChat: NewChatPolicy{PerThread: true}, KeepsConversation: true}
	sessions := t.TempDir()
	d, err := New(withTimings(agent, testGUI()), Options{LockDir: t.TempDir(), Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	defer d.(interface{ Close() }).Close()
	if _, err := d.Run(context.Background(), Turn{Prompt: "a1", Thread: "A"}); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("process died")
	_, err = d.Run(context.Background(), Turn{Prompt: "b1", Thread: "B", OnStage: func(s Stage) error {
		if s == StageSubmitted {
			return crash
		}
		return nil
	}})
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v, want the simulated crash", err)
	}
	reply, err := d.Run(context.Background(), Turn{Prompt: "b1", Thread: "B", Resume: true})
	if err != nil || reply != "You wrote:\nb1" {
		t.Fatalf("resumed reply %q, err %v", reply, err)
	}
	if s := chatLog(t, chat); s != "new a1 new b1" {
		t.Errorf("the window saw %q, want %q", s, "new a1 new b1")
	}
	if c := readRecordOf(t, sessions, "Agent-8"); c.Thread != "B" || c.Turns != 1 || len(c.Previous) != 1 {
		t.Errorf("record = %+v", c)
	}
}

// withTimings is s with the GUI turns' timings t.
func withTimings(s Settings, t Timings) Settings {
	s.Timings = t
	return s
}
