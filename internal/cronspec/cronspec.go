// Package cronspec is the one reading of the cron specs of agentctl.yaml's
// recovery loops, shared by config, which checks them, and the runner's
// schedule (package agents), which runs them: five fields, an optional
// leading seconds field, or a descriptor such as @every 30s. It owns that
// grammar only; it never schedules, runs or waits on anything (the
// runner's clock does).
package cronspec

import "github.com/robfig/cron/v3"

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads spec into the schedule that names its times.
func Parse(spec string) (cron.Schedule, error) { return parser.Parse(spec) }
