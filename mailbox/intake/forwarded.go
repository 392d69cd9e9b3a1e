package intake

import (
	"errors"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// Forwarded is a message another machine's agentctl forwarded to this
// runtime (package hub carries it): its bytes as they were dropped there,
// and a name for them should they be no message.
type Forwarded struct {
	Data []byte
	// Name is the file name the bytes take in inbox/ when they do not
	// decode, unique to the forwarding (the server's sequence): delivered
	// again, they land on the same name.
	Name string
	// At stands for the modification time a file dropped here would have.
	At time.Time
}

// DeliverForwarded hands a forwarded message to mb, as a file dropped in
// its inbox would come in: bytes that are no message go into inbox/ as
// they are, for the consumer to dead-letter with the reason, so nothing is
// lost here. A message that decodes is first put to allow, which may
// refuse it (its sender is not one the forwarding machine may send as);
// that error is returned and nothing is delivered. A message delivered
// before (a forwarder that sent it twice) is no error.
func DeliverForwarded(mb *mailbox.Mailbox, f Forwarded, allow func(mailbox.Message) error) error {
	msg, err := mailbox.Decode(f.Data, mailbox.Source{Name: "forwarded.json", ModTime: f.At, Owner: mb.Agent})
	if err != nil {
		return mb.DeliverBytes(f.Name, f.Data)
	}
	if err := allow(msg); err != nil {
		return err
	}
	if err := mb.Deliver(msg); err != nil && !errors.Is(err, mailbox.ErrDuplicate) {
		return err
	}
	return nil
}
