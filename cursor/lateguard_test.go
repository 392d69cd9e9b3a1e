package cursor

import "testing"

// A copy is the chat's when it holds a recent prompt, as a transcript
// does, or equals one of the chat's copies; a short reply is never looked
// for inside the person's own copy.
func TestChatSaidKnowsTheChatsCopies(t *testing.T) {
	var c chatSaid
	c.addPrompt("Message-ID: m-1\nAnswer the message.")
	c.addCopy("ok")
	for copied, want := range map[string]bool{
		"You: Message-ID: m-1\nAnswer the message.\nAgent: ok\n": true, // the transcript
		"ok":                                   true,  // the reply's own copy
		"look here":                            false, // the person's, with the reply inside it
		"":                                     false,
		"Message-ID: m-2\nAnswer the message.": false,
	} {
		if got := c.holds(copied); got != want {
			t.Errorf("holds(%q) = %v, want %v", copied, got, want)
		}
	}
	for i := range chatSaidTurns {
		c.addCopy(string(rune('a' + i)))
	}
	if c.holds("ok") {
		t.Error("a copy older than the last few turns is still known")
	}
}
