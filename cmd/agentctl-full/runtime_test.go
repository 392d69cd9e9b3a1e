package main

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
)

func TestIntakeOptionsCarryTheMailboxSettings(t *testing.T) {
	cfg, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1"}))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mailbox.MaxInboxJSONBytes = 1234
	if got := intakeOptions(cfg).MaxInboxJSONBytes; got != 1234 {
		t.Errorf("MaxInboxJSONBytes = %d, want the configured 1234", got)
	}
	if got := runnerSettings(&cli.Env{Root: t.TempDir()}, cfg, cfg.Agents[0], nil, zerolog.Nop()).Intake.MaxInboxJSONBytes; got != 1234 {
		t.Errorf("the runner's MaxInboxJSONBytes = %d, want the configured 1234", got)
	}
}

// TestNoBlockNoticeReachesTheRunner: run.no_block_notice reaches the
// runner as set, and its 0 (never) as the runner's never.
func TestNoBlockNoticeReachesTheRunner(t *testing.T) {
	cfg, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1"}))
	if err != nil {
		t.Fatal(err)
	}
	env := &cli.Env{Root: t.TempDir()}
	for set, want := range map[int]int{3: 3, 5: 5, 0: -1} {
		cfg.Run.NoBlockNotice = set
		if got := runnerSettings(env, cfg, cfg.Agents[0], nil, zerolog.Nop()).NoBlockNotice; got != want {
			t.Errorf("run.no_block_notice %d reaches the runner as %d, want %d", set, got, want)
		}
	}
}
