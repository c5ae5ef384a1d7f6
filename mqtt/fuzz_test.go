package mqtt

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
)

// FuzzReceive drives an agent's whole receive path (topic parsing,
// envelope, acknowledgement and status decoding, de-duplication, reassembly, reordering and
// their bounds) with arbitrary sequences of payloads. Nothing may panic,
// and the link layer's accounting must stay consistent.
func FuzzReceive(f *testing.F) {
	agents := []string{"a0", "a1", "a2"}
	stream := func(msgs []wireMsg, r *rand.Rand) []byte {
		var b []byte
		wire, _ := scramble(r, msgs, 0.2)
		for _, w := range wire {
			b = append(b, byte(w.from))
			b = binary.LittleEndian.AppendUint16(b, uint16(len(w.b)))
			b = append(b, w.b...)
		}
		return b
	}
	r := rand.New(rand.NewPCG(1, 2))
	f.Add(stream(genTraffic(f, r, agents, []int{0, 2}, 3, 8), r))
	f.Add(stream(genTraffic(f, r, agents, []int{2}, 4, 64), r))
	f.Add([]byte{0x80, 3, 0, '{', '}', '!'})
	ack, _ := (&envelope.Ack{Run: "r", Sender: "a0", Receiver: "a1", Nonce: 1, Delivered: 2}).Encode()
	f.Add(append([]byte{0, byte(len(ack)), 0}, ack...))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := AgentConfig{Config: Config{
			Broker: Broker{URL: "tcp://127.0.0.1:1"}, Run: "r", Protocol: "p", Agents: agents, Logger: discard,
			Limits: Limits{MaxPayload: 64, MaxMessage: 4096, MaxHeldBytes: 512, MaxReassemblies: 2},
		}, Agent: 1}.resolve()
		if err != nil {
			t.Fatal(err)
		}
		a := newAgent(cfg, &recorder{})
		ctx := context.Background()
		if err := a.start(ctx); err != nil {
			t.Fatal(err)
		}
		for len(data) >= 3 {
			sel, n := data[0], int(binary.LittleEndian.Uint16(data[1:3]))
			data = data[3:]
			n = min(n, len(data))
			payload := data[:n]
			data = data[n:]
			from := []string{"a0", "a1", "a2", "zz"}[sel&3]
			tp := a.layout.Inbox("a1", from)
			if sel&0x80 != 0 {
				tp = a.layout.Status(from)
			}
			if err := a.handle(ctx, item{kind: itemMessage, topic: tp, payload: payload}); err != nil {
				return // a status saying a peer failed ends the run: fine
			}
		}
		held := 0
		for _, l := range a.recv.in {
			for seq, d := range l.ready {
				if seq <= l.next {
					t.Fatalf("held message %d at or before next %d", seq, l.next)
				}
				held += len(d.body) + heldOverhead
			}
		}
		if held != a.recv.held || held+a.recv.reasm.Bytes() > 512 || a.recv.reasm.Bytes() < 0 {
			t.Fatalf("held %d, accounted %d, reassembly bytes %d", held, a.recv.held, a.recv.reasm.Bytes())
		}
		if got := int64(len(a.proto.(*recorder).got)); got != a.ctr.delivered.Load() {
			t.Fatalf("protocol saw %d messages, delivered %d", got, a.ctr.delivered.Load())
		}
	})
}
