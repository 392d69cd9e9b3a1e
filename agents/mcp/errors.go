package mcp

import "errors"

// toolError is err as a tool's error: the sentence the command prints
// after "agentctl: ", and its "hint:" line when the fix is known. The SDK
// hands it to the client as the call's result, marked as an error.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		text += "\nhint: " + h.Hint()
	}
	return errors.New(text)
}
