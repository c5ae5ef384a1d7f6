package mqtt

import (
	"errors"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// opener checks what one client receives before anything else reads it:
// it drops retained messages on inbox and multicast topics (hearth never
// retains them, so one is forged or left over from an earlier run), and,
// with keys, every payload that its topic's sender did not sign (see
// Signing in the package documentation).
type opener struct {
	keys   *sign.Keyring
	prefix string
	// signers maps the run's agent names to the key that signs for
	// them (their home); other names sign as themselves.
	signers map[string]string
	replay  sign.Replay
}

func newOpener(keys *sign.Keyring, prefix string, signers map[string]string) *opener {
	return &opener{keys: keys, prefix: prefix, signers: signers}
}

func (o *opener) signerFor(name string) string {
	if s, ok := o.signers[name]; ok {
		return s
	}
	return name
}

// open returns the content of payload b received on topic tp and when it
// was signed (zero without keys), or the reason (a Drop… constant) to
// drop it and why.
func (o *opener) open(tp string, retained bool, b []byte) ([]byte, time.Time, string, error) {
	p := topic.Parse(o.prefix, tp)
	if retained && (p.Kind == topic.InboxTopic || p.Kind == topic.MulticastTopic) {
		return nil, time.Time{}, DropRetained, errors.New("a retained message on an inbox or multicast topic")
	}
	if o.keys == nil {
		return b, time.Time{}, "", nil
	}
	var allow func(string) bool
	switch p.Kind {
	case topic.InboxTopic, topic.MulticastTopic:
		want := o.signerFor(p.From)
		allow = func(s string) bool { return s == want }
	case topic.StatusTopic, topic.PresenceTopicKind, topic.ResultTopicKind, topic.HomeTopicKind:
		want := o.signerFor(p.Agent)
		allow = func(s string) bool { return s == want }
	case topic.CmdTopicKind:
		if p.Agent == "" {
			allow = o.keys.IsController
		} else {
			want := p.Agent
			allow = func(s string) bool { return s == want }
		}
	}
	m, err := o.keys.Open(tp, b, allow)
	switch {
	case errors.Is(err, sign.ErrUnsigned):
		return nil, time.Time{}, DropUnsigned, err
	case errors.Is(err, sign.ErrUnknownSigner), errors.Is(err, sign.ErrNotAllowed):
		return nil, time.Time{}, DropWrongSigner, err
	case err != nil:
		return nil, time.Time{}, DropBadSignature, err
	}
	// Envelopes and acknowledgements have the link layer's sequence
	// numbers (a replayed one is a duplicate); presence's last will is
	// signed at connection time and published later, so it is older
	// than the "online" it replaces. Everything else is latest-wins.
	switch p.Kind {
	case topic.InboxTopic, topic.MulticastTopic, topic.PresenceTopicKind:
	default:
		if !o.replay.Fresh(tp, m) {
			return nil, time.Time{}, DropReplayed, errors.New("older than a message already received from its signer on this topic")
		}
	}
	return m.Content, m.At(), "", nil
}
