package agents

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// A runtime that cannot be written for a while (a full disk, a file
// system remounted read-only, a runtime folder unmounted or removed) is
// no reason for a seat to end: nothing it holds is lost by waiting, and
// whoever frees the space should not also have to restart every runner.
// The runner stops taking work, says so, probes the runtime on its clock
// and carries on once a probe writes again. The message in flight stays in
// processing/ and is resumed as after a restart.

// faultKind is what keeps the runtime from being written.
type faultKind string

const (
	faultNone        faultKind = ""
	faultDiskFull    faultKind = "disk-full"    // ENOSPC, EDQUOT
	faultReadOnly    faultKind = "read-only"    // EROFS, or EACCES/EPERM on the runtime
	faultRuntimeGone faultKind = "runtime-gone" // the runtime folder is not there
)

// How often a waiting seat probes the runtime: 1 s at first, doubling up
// to a minute, on the runner's clock.
const (
	faultFirstProbe = time.Second
	faultMaxProbe   = time.Minute
)

// classifyFault says whether err, which stopped the runner's loop, is a
// fault of the runtime that waiting can mend. rootGone says whether the
// runtime folder root was missing when err was returned: then every error
// is that, whatever words it came in. Permission errors count only on a
// path inside root (or with no path): one elsewhere is a setting to fix.
func classifyFault(err error, root string, rootGone bool) faultKind {
	switch {
	case err == nil:
		return faultNone
	case rootGone:
		return faultRuntimeGone
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return faultDiskFull
	case errors.Is(err, syscall.EROFS):
		return faultReadOnly
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		if p := errPath(err); p == "" || within(root, p) {
			return faultReadOnly
		}
	}
	return faultNone
}

// errPath is the file an error is about, "" when it names none.
func errPath(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &le):
		return le.New
	case errors.As(err, &pe):
		return pe.Path
	}
	return ""
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// faultText is what the person and the log are told of a fault.
func faultText(k faultKind) (state, waiting string) {
	switch k {
	case faultDiskFull:
		return "disk-full", "the runtime's disk is full; free some space"
	case faultReadOnly:
		return "read-only", "the runtime cannot be written (read-only, or no permission)"
	default:
		return "runtime-gone", "the runtime folder is gone; mount or restore it"
	}
}

// lastFault is the seat's last fault that passed.
type lastFault struct {
	kind          faultKind
	since, passed time.Time
	delay         time.Duration
}

// sitOut is the one place a fault is acted on: the seat, its loop ended by
// cause, waits until the runtime takes writes again, probing it with a
// growing delay, and says when the wait begins and ends. It returns nil
// when the runner may start its loop again, ctx's error when it ended.
func (r *Runner) sitOut(ctx context.Context, kind faultKind, cause error) error {
	since, delay := r.now(), faultFirstProbe
	// A fault back within a minute of passing (a disk with room for
	// status.json but not for the work) goes on as the same one: its
	// notices have the same ids, so the person is not told again, and the
	// probes keep slowing down.
	if l := r.lastFault; l.kind == kind && r.now().Sub(l.passed) < faultMaxProbe {
		since, delay = l.since, min(2*l.delay, faultMaxProbe)
	}
	state, waiting := faultText(kind)
	key := since.UTC().Format(time.RFC3339Nano)
	r.log.Warn().Str("event", "fault").Str("fault", string(kind)).Time("since", since).Err(cause).
		Msg("the runtime cannot be written; no new work is taken, and the seat carries on by itself once it can")
	err := r.hb.set(state, "", "")
	if err == nil {
		err = r.hb.wait(waiting)
	}
	if err != nil {
		r.log.Debug().Err(err).Msg("cannot show the wait in status.json yet; the log and the probes say it")
	}
	r.queueNotice(string(kind), fmt.Sprintf("%s waits: %s", r.s.Agent, waiting),
		fmt.Sprintf("%s stopped taking work at %s: %v\n\nIt tries again by itself, %s apart at first and up to %s apart, and goes on when the runtime can be written; the message it was working stays in processing/ and is resumed. You are told again when it goes on.",
			r.s.Agent, since.UTC().Format(time.RFC3339), cause, faultFirstProbe, faultMaxProbe), key)
	r.deliverNotices()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.s.Clock.At(r.now().Add(delay)):
		}
		err = r.probeRuntime(waiting)
		if err == nil {
			break
		}
		r.log.Debug().Str("event", "fault-probe").Str("fault", string(kind)).Err(err).Msg("the runtime still cannot be written")
		delay = min(2*delay, faultMaxProbe)
	}
	r.lastFault = lastFault{kind: kind, since: since, passed: r.now(), delay: delay}
	took := r.now().Sub(since).Round(time.Second)
	r.log.Info().Str("event", "fault-passed").Str("fault", string(kind)).Dur("after", took).Msg("the runtime can be written again; the seat goes on")
	if err := r.hb.wait(""); err != nil {
		r.log.Warn().Err(err).Msg("cannot clear the wait in status.json")
	}
	r.queueNotice(string(kind)+"-passed", fmt.Sprintf("%s goes on: the runtime can be written again", r.s.Agent),
		fmt.Sprintf("%s went on at %s, after %s of waiting (%s). Nothing it held was lost.", r.s.Agent, r.now().UTC().Format(time.RFC3339), took, waiting), key)
	r.deliverNotices()
	return nil
}

// probeRuntime tries to write the runtime as the loop would: the seat's
// mailbox (and Human's) made again if the runtime folder came back empty,
// then status.json rewritten with the wait.
func (r *Runner) probeRuntime(waiting string) error {
	if _, err := os.Stat(r.s.Root); err != nil {
		return err
	}
	for _, a := range []string{r.s.Agent, r.s.Human} {
		if a == "" {
			continue
		}
		if _, err := mailbox.Open(r.s.Root, a); errors.Is(err, mailbox.ErrNoMailbox) {
			if err := mailbox.Create(r.s.Root, a); err != nil {
				return err
			}
			r.log.Warn().Str("event", "repaired").Str("mailbox", a).Msg("the mailbox was gone with the runtime folder; made it again")
		}
	}
	if err := r.hb.wait(waiting); err != nil {
		return err
	}
	r.deliverNotices()
	return r.hb.beat()
}

// queueNotice adds a notice for Human, delivered by deliverNotices; its id
// comes from the fault's start, so it is stored once however often it is
// tried.
func (r *Runner) queueNotice(kind, subject, body, key string) {
	if r.s.Human == "" {
		r.log.Warn().Str("event", kind).Msg(subject + "; no person is configured to tell")
		return
	}
	r.notices = append(r.notices, mailbox.Message{
		ID: derivedID("fault-"+kind, r.s.Agent, key), From: "agentctl", To: r.s.Human,
		Type: "recovery", Priority: mailbox.High, Subject: subject, Body: body, CreatedAt: r.now().UTC(),
		Meta: map[string]any{"agent": r.s.Agent},
	})
}

// deliverNotices delivers the notices not delivered yet; one that cannot
// be stored (the disk is still full) waits for the next try.
func (r *Runner) deliverNotices() {
	kept := r.notices[:0]
	for _, n := range r.notices {
		if _, err := deliver(r.s.Root, n); err != nil {
			r.log.Debug().Err(err).Str("id", n.ID).Msg("cannot deliver the notice yet; it is tried again")
			kept = append(kept, n)
		}
	}
	r.notices = kept
}
