package mailbox

import (
	"fmt"
	"os"
	"time"
)

// Expire dead-letters the pending messages whose ExpiresAt has passed,
// without waiting for Claim to reach them behind a long queue, and returns
// them. Messages it cannot read are left for Claim, which dead-letters them
// with the reason.
func (c *Consumer) Expire(now time.Time) ([]Message, error) {
	var expired []Message
	for stem := range c.q.byStem {
		name := stem + MessageSuffix
		path := c.mb.path(InboxDir, name)
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := ReadRegular(path, fi)
		if err != nil {
			continue
		}
		msg, err := Decode(data, Source{Name: name, Owner: c.mb.Agent})
		if err != nil || msg.ExpiresAt == nil || !now.After(*msg.ExpiresAt) {
			continue
		}
		reason := fmt.Sprintf("it expired at %s before it could be processed", msg.ExpiresAt.UTC().Format(time.RFC3339))
		c.q.remove(stem)
		if err := c.deadletterFile(name, msg.ID, reason, now); err != nil {
			return expired, err
		}
		expired = append(expired, msg)
	}
	return expired, nil
}
