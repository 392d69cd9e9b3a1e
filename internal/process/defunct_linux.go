package process

import "bytes"

// defunct reports a zombie whose threads are all gone: the program ended.
func defunct(pid int) bool {
	fields, err := stat(pid)
	return err == nil && len(fields) > 0 && bytes.Equal(fields[0], []byte("Z")) && !threadsLeft(pid)
}
