package afb

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// fuzzProblem is small enough to build per input and has every kind of
// function: unary, binary and ternary, local and external, some hard.
var fuzzProblem = randomProblem(11)

// fuzzAgents builds fresh agents under variant v, starts them and delivers
// the first steps messages oldest first, so that inputs hit agents in the
// middle of a search. It returns the agents and what is still queued.
func fuzzAgents(t testing.TB, v, steps int) ([]mva.Protocol, []mva.Message) {
	ctx := context.Background()
	d := mva.Decompose(fuzzProblem)
	nodes, _, err := mva.BuildNodes(ctx, d, func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		return local.New("dfbnb", lp)
	}, v%2 == 0, 1, variants[v%len(variants)])
	if err != nil {
		t.Fatal(err)
	}
	protos := make([]mva.Protocol, len(nodes))
	var queue []mva.Message
	for i, n := range nodes {
		if protos[i], err = New(n); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range protos {
		out, err := p.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
	}
	for ; steps > 0 && len(queue) > 0; steps-- {
		m := queue[0]
		queue = queue[1:]
		out, err := protos[m.To].Step(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
	}
	return protos, queue
}

// inject steps a forged message into agent `to` of a fresh run; it must
// not panic, and an error must leave the agent usable.
func inject(t testing.TB, v, steps, kind, from, to int, body []byte) {
	protos, queue := fuzzAgents(t, v, steps)
	n := len(protos)
	kinds := Kinds()
	m := mva.Message{From: from % (n + 1), To: to % n, Kind: kinds[kind%len(kinds)], Body: body}
	if kind%(len(kinds)+1) == len(kinds) {
		m.Kind = "BOGUS"
	}
	ctx := context.Background()
	_, _ = protos[m.To].Step(ctx, m)
	// Whatever happened, the real messages still decode and the agents
	// keep answering without panicking.
	for i := 0; i < 50 && len(queue) > 0; i++ {
		m := queue[0]
		queue = queue[1:]
		out, err := protos[m.To].Step(ctx, m)
		if err == nil {
			queue = append(queue, out...)
		}
	}
	for _, p := range protos {
		_ = p.Result()
	}
}

func FuzzStep(f *testing.F) {
	// Seed with every real body of a run, as sent.
	protos, queue := fuzzAgents(f, 0, 0)
	kindIndex := map[string]int{}
	for i, k := range Kinds() {
		kindIndex[k] = i
	}
	for i := 0; i < 60 && len(queue) > 0; i++ {
		m := queue[0]
		queue = queue[1:]
		f.Add(uint8(0), uint8(i), uint8(kindIndex[m.Kind]), uint8(m.From), uint8(m.To), m.Body)
		out, err := protos[m.To].Step(context.Background(), m)
		if err != nil {
			f.Fatal(err)
		}
		queue = append(queue, out...)
	}
	f.Add(uint8(4), uint8(0), uint8(5), uint8(2), uint8(0), encodeFloat(3))
	f.Fuzz(func(t *testing.T, v, steps, kind, from, to uint8, body []byte) {
		inject(t, int(v), int(steps%40), int(kind), int(from), int(to), body)
	})
}

// TestStepRandomBodies feeds random and truncated bodies of every kind to
// every agent at several points of a run, without -fuzz.
func TestStepRandomBodies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	protos, queue := fuzzAgents(t, 0, 0)
	var real [][]byte
	for i := 0; i < 40 && len(queue) > 0; i++ {
		m := queue[0]
		queue = queue[1:]
		real = append(real, m.Body)
		out, _ := protos[m.To].Step(context.Background(), m)
		queue = append(queue, out...)
	}
	for i := range 600 {
		var body []byte
		switch i % 3 {
		case 0: // random bytes
			body = make([]byte, r.IntN(40))
			for j := range body {
				body[j] = byte(r.UintN(256))
			}
		case 1: // a real body, truncated
			b := real[r.IntN(len(real))]
			body = b[:r.IntN(len(b)+1)]
		default: // a real body with one byte changed
			body = append([]byte(nil), real[r.IntN(len(real))]...)
			if len(body) > 0 {
				body[r.IntN(len(body))] = byte(r.UintN(256))
			}
		}
		inject(t, i%len(variants), r.IntN(30), i%(len(Kinds())+1), r.IntN(5), r.IntN(5), body)
	}
}
