package mqtt

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mva"
)

// wireMsg is one generated protocol message and its envelopes.
type wireMsg struct {
	from int
	seq  uint64
	kind string
	body []byte
	envs [][]byte
}

// genTraffic makes n messages on each link from senders to agent "a1" of
// agents, with random sizes, split at maxPayload.
func genTraffic(t testing.TB, r *rand.Rand, agents []string, senders []int, n, maxPayload int) []wireMsg {
	t.Helper()
	lim := envelope.Limits{MaxPayload: maxPayload}
	var out []wireMsg
	for _, from := range senders {
		for seq := range uint64(n) {
			body := make([]byte, r.IntN(5*maxPayload))
			for i := range body {
				body[i] = byte(r.Uint32())
			}
			m := wireMsg{from: from, seq: seq, kind: fmt.Sprintf("K%d", r.IntN(3)), body: body}
			h := envelope.Header{Run: "r", Sender: agents[from], Receiver: "a1", Protocol: "p", Kind: m.kind, Seq: seq}
			for _, e := range envelope.Split(h, body, maxPayload) {
				b, err := e.Encode(lim)
				if err != nil {
					t.Fatal(err)
				}
				m.envs = append(m.envs, b)
			}
			out = append(out, m)
		}
	}
	return out
}

// scramble returns every envelope of msgs, with a random fraction
// duplicated, in random order; extra is the number of duplicates added.
func scramble(r *rand.Rand, msgs []wireMsg, dupProb float64) (wire []envAt, extra int) {
	for _, m := range msgs {
		for _, b := range m.envs {
			wire = append(wire, envAt{m.from, b})
			for r.Float64() < dupProb {
				wire = append(wire, envAt{m.from, b})
				extra++
			}
		}
	}
	r.Shuffle(len(wire), func(i, j int) { wire[i], wire[j] = wire[j], wire[i] })
	return wire, extra
}

type envAt struct {
	from int
	b    []byte
}

// checkDelivered checks that got holds every message of msgs exactly once,
// in sequence order on each link.
func checkDelivered(t *testing.T, got []delivery, msgs []wireMsg) {
	t.Helper()
	want := map[[2]uint64]wireMsg{}
	for _, m := range msgs {
		want[[2]uint64{uint64(m.from), m.seq}] = m
	}
	next := map[int]uint64{}
	for _, d := range got {
		if d.seq != next[d.from] {
			t.Fatalf("link %d: delivered seq %d, want %d", d.from, d.seq, next[d.from])
		}
		next[d.from]++
		m := want[[2]uint64{uint64(d.from), d.seq}]
		if d.kind != m.kind || !bytes.Equal(d.body, m.body) {
			t.Fatalf("link %d seq %d: wrong content", d.from, d.seq)
		}
	}
	if len(got) != len(msgs) {
		t.Fatalf("delivered %d messages, want %d", len(got), len(msgs))
	}
}

// TestReceiverDedupReorder feeds the link layer duplicated and shuffled
// envelopes of fragmented messages from several senders.
func TestReceiverDedupReorder(t *testing.T) {
	agents := []string{"a0", "a1", "a2", "a3"}
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 3))
		msgs := genTraffic(t, r, agents, []int{0, 2, 3}, 8, 1+r.IntN(40))
		wire, extra := scramble(r, msgs, 0.3)
		rc := newReceiver(len(agents), Limits{}.withDefaults())
		var got []delivery
		dups := 0
		for _, w := range wire {
			e, err := envelope.Decode(w.b, envelope.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var res acceptResult
			var reason string
			got, res, reason = rc.accept(w.from, &e, got)
			switch res {
			case duplicate:
				dups++
			case dropped:
				t.Fatalf("seed %d: dropped: %s", seed, reason)
			}
		}
		checkDelivered(t, got, msgs)
		if dups != extra {
			t.Fatalf("seed %d: %d duplicates counted, %d injected", seed, dups, extra)
		}
		if rc.held != 0 || rc.reasm.Pending() != 0 || rc.reasm.Bytes() != 0 {
			t.Fatalf("seed %d: state left: held %d, %d reassemblies", seed, rc.held, rc.reasm.Pending())
		}
		if d := []uint64{rc.in[0].next, rc.in[1].next, rc.in[2].next, rc.in[3].next}; d[0] != 8 || d[1] != 0 || d[2] != 8 || d[3] != 8 {
			t.Fatalf("delivered counts %v", d)
		}
	}
}

// TestReceiverBoundsRecover gives the link layer almost no room for
// messages out of order: it must refuse some (asking for a resync) but
// never the one each link waits for, and a retransmission of everything —
// what senders do on a resync — must complete the delivery.
func TestReceiverBoundsRecover(t *testing.T) {
	agents := []string{"a0", "a1", "a2"}
	r := rand.New(rand.NewPCG(9, 9))
	msgs := genTraffic(t, r, agents, []int{0, 2}, 10, 16)
	wire, _ := scramble(r, msgs, 0.2)
	rc := newReceiver(len(agents), Limits{MaxHeldBytes: 100, MaxReassemblies: 1}.withDefaults())
	var got []delivery
	drops := 0
	feed := func(w envAt) {
		e, err := envelope.Decode(w.b, envelope.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var res acceptResult
		got, res, _ = rc.accept(w.from, &e, got)
		if res == dropped {
			drops++
		}
	}
	for _, w := range wire {
		feed(w)
	}
	if drops == 0 {
		t.Fatal("the bounds never refused anything")
	}
	for round := 0; len(got) < len(msgs) && round < 3; round++ {
		for _, m := range msgs {
			for _, b := range m.envs {
				feed(envAt{m.from, b})
			}
		}
	}
	checkDelivered(t, got, msgs)
}

// recorder is a protocol that records what it is given.
type recorder struct {
	got []mva.Message
}

func (p *recorder) Start(context.Context) ([]mva.Message, error) { return nil, nil }
func (p *recorder) Step(_ context.Context, m mva.Message) ([]mva.Message, error) {
	p.got = append(p.got, m)
	return nil, nil
}
func (p *recorder) Done() bool              { return false }
func (p *recorder) Result() mva.AgentResult { return mva.AgentResult{} }

// TestAgentReceivePath injects duplicated and reordered envelopes into an
// agent's receive path (what paho's handler hands over), before and after
// the protocol starts, and checks what the protocol sees and the counters.
func TestAgentReceivePath(t *testing.T) {
	agents := []string{"a0", "a1", "a2"}
	cfg, err := AgentConfig{Config: Config{
		Broker: Broker{URL: "tcp://127.0.0.1:1"}, Run: "r", Protocol: "p", Agents: agents, Logger: testLogger(t),
	}, Agent: 1}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	a := newAgent(cfg, rec)
	r := rand.New(rand.NewPCG(4, 4))
	msgs := genTraffic(t, r, agents, []int{0, 2}, 12, 8)
	wire, extra := scramble(r, msgs, 0.25)
	ctx := context.Background()
	for i, w := range wire {
		if i == len(wire)/2 {
			if err := a.start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		it := item{kind: itemMessage, topic: a.layout.Inbox("a1", agents[w.from]), payload: w.b}
		if err := a.handle(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	var got []delivery
	for _, m := range rec.got {
		if m.To != 1 {
			t.Fatalf("message to %d", m.To)
		}
		seq := uint64(0)
		for _, d := range got {
			if d.from == m.From {
				seq++
			}
		}
		got = append(got, delivery{from: m.From, seq: seq, kind: m.Kind, body: m.Body})
	}
	checkDelivered(t, got, msgs)
	st := a.ctr.snapshot("a1")
	if st.Received != int64(len(wire)) || st.Duplicates != int64(extra) || st.Delivered != int64(len(msgs)) || len(st.Dropped) != 0 {
		t.Fatalf("stats %+v; injected %d envelopes, %d duplicates, %d messages", st, len(wire), extra, len(msgs))
	}
}
