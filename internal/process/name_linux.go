//go:build linux

package process

import (
	"fmt"
	"os"
	"strings"
)

// Name is the command name of the process with this pid, for messages
// that name a process to a human; "" when unknown.
func Name(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
