// Package clilog makes the one logger agentctl's programs write on
// stderr: one event a line, readable on a terminal (coloured only there),
// or one JSON object a line for a supervisor or a log collector. Debug
// lines (the hub's connection chatter) stay out. agentctl-hub's lines then
// read as those of the agentctl hub that started it.
//
// It owns only the logger's shape; it never decides what is logged.
package clilog

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// New is the logger writing to w in format, "console" or "json".
func New(w io.Writer, format string) (zerolog.Logger, error) {
	switch format {
	case "json":
		return zerolog.New(w).Level(zerolog.InfoLevel).With().Timestamp().Logger(), nil
	case "console":
		noColor := true
		if f, ok := w.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				noColor = false
			}
		}
		return zerolog.New(zerolog.ConsoleWriter{Out: w, NoColor: noColor, TimeFormat: time.TimeOnly}).Level(zerolog.InfoLevel).With().Timestamp().Logger(), nil
	}
	return zerolog.Logger{}, fmt.Errorf("--log-format %q is neither console nor json", format)
}
