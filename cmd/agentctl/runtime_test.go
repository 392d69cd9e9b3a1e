package main

import (
	"testing"

	"github.com/agentctl/agentctl/config"
)

func TestConsumerOptionsCarryTheMailboxSettings(t *testing.T) {
	cfg := config.Default()
	cfg.Mailbox.MaxInboxJSONBytes = 1234
	if got := consumerOptions(cfg).MaxInboxJSONBytes; got != 1234 {
		t.Errorf("MaxInboxJSONBytes = %d, want the configured 1234", got)
	}
}
