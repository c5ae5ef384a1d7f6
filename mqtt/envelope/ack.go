package envelope

import (
	"encoding/binary"
	"fmt"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// AckVersion is the first byte of an acknowledgement, where an envelope
// has Version; the high bit keeps the two apart on the inbox topics they
// share.
//
// An acknowledgement tells a sender how many of its messages the receiver
// has delivered in order, on that one link. It goes on the sender's inbox
// topic (<prefix>/<run>/inbox/<sender of the messages>/<receiver>), which
// every broker ACL already lets the receiver publish to and the sender
// read, so that a running agent acknowledges to the few peers it hears
// from instead of in a status that every agent of the run must read.
//
//	version    1 byte (AckVersion)
//	run        string
//	sender     string   the agent acknowledging (the messages' receiver)
//	receiver   string   the agent acknowledged (the messages' sender)
//	nonce      uvarint  the acknowledging agent's incarnation, as in its status
//	delivered  uvarint  messages from receiver delivered in order so far
//
// Strings and varints are encoded as in an envelope, minimal and with
// nothing after the last field, so that an acknowledgement has exactly one
// encoding.
const AckVersion = 0x81

// Ack is one acknowledgement.
type Ack struct {
	Run, Sender, Receiver string
	Nonce                 uint64
	Delivered             uint64
}

// maxAck bounds an acknowledgement's encoding: three names and two
// varints.
const maxAck = 1 + 3*(2+topic.MaxName) + 2*10

// IsAck reports whether payload b, received on an inbox topic, is an
// acknowledgement rather than an envelope.
func IsAck(b []byte) bool { return len(b) > 0 && b[0] == AckVersion }

// Encode returns a's encoding, or an error if a name cannot be a topic
// level (a receiver would refuse it).
func (a *Ack) Encode() ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 16+len(a.Run)+len(a.Sender)+len(a.Receiver))
	b = append(b, AckVersion)
	for _, s := range []string{a.Run, a.Sender, a.Receiver} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, a.Nonce)
	return binary.AppendUvarint(b, a.Delivered), nil
}

func (a *Ack) check() error {
	for _, f := range []struct{ what, s string }{
		{"run", a.Run}, {"sender", a.Sender}, {"receiver", a.Receiver},
	} {
		if err := topic.CheckName(f.s); err != nil {
			return fmt.Errorf("%w: acknowledgement %s: %w", ErrMalformed, f.what, err)
		}
	}
	return nil
}

// DecodeAck parses and validates one acknowledgement; it never panics and
// allocates only the three names.
func DecodeAck(b []byte) (Ack, error) {
	switch {
	case len(b) == 0:
		return Ack{}, fmt.Errorf("%w: empty", ErrMalformed)
	case b[0] != AckVersion:
		return Ack{}, fmt.Errorf("%w: acknowledgement version %d (this build reads %d)", ErrVersion, b[0], AckVersion)
	case len(b) > maxAck:
		return Ack{}, fmt.Errorf("%w: acknowledgement of %d bytes", ErrTooLarge, len(b))
	}
	r := reader{buf: b[1:]}
	a := Ack{Run: r.str(topic.MaxName), Sender: r.str(topic.MaxName), Receiver: r.str(topic.MaxName)}
	a.Nonce = r.uvarint()
	a.Delivered = r.uvarint()
	if r.err != nil {
		return Ack{}, r.err
	}
	if len(r.buf) != 0 {
		return Ack{}, fmt.Errorf("%w: %d bytes after the acknowledgement", ErrMalformed, len(r.buf))
	}
	if err := a.check(); err != nil {
		return Ack{}, err
	}
	return a, nil
}
