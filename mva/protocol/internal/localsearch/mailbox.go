package localsearch

import "fmt"

// Mailbox buffers one kind of round-stamped message, one per neighbour and
// round. In the synchronous-round protocols a neighbour can be at most one
// round ahead (it cannot finish round r+1 without this agent's messages of
// round r+1), so the mailbox keeps the current round and the next one and
// refuses anything else: such a message is forged or misrouted, and
// keeping it would let a peer grow the agent's memory without bound.
type Mailbox[T any] struct {
	round      int
	cur, next  []T
	have, ahed []bool
	count      int
}

// NewMailbox returns an empty mailbox for neighbours senders, at round.
func NewMailbox[T any](neighbours, round int) *Mailbox[T] {
	return &Mailbox[T]{
		round: round,
		cur:   make([]T, neighbours), next: make([]T, neighbours),
		have: make([]bool, neighbours), ahed: make([]bool, neighbours),
	}
}

// Round returns the current round.
func (m *Mailbox[T]) Round() int { return m.round }

// Put stores v from the neighbour at position j for round.
func (m *Mailbox[T]) Put(round, j int, v T) error {
	switch round {
	case m.round:
		if m.have[j] {
			return fmt.Errorf("second message of round %d from the same neighbour", round)
		}
		m.cur[j], m.have[j] = v, true
		m.count++
	case m.round + 1:
		if m.ahed[j] {
			return fmt.Errorf("second message of round %d from the same neighbour", round)
		}
		m.next[j], m.ahed[j] = v, true
	default:
		return fmt.Errorf("message of round %d during round %d", round, m.round)
	}
	return nil
}

// Full reports that every neighbour's message of the current round is in.
func (m *Mailbox[T]) Full() bool { return m.count == len(m.cur) }

// Has reports whether the neighbour at position j's message of the current
// round is in.
func (m *Mailbox[T]) Has(j int) bool { return m.have[j] }

// Get returns the neighbour at position j's message of the current round.
func (m *Mailbox[T]) Get(j int) T { return m.cur[j] }

// Advance moves to the next round, keeping what arrived early for it.
func (m *Mailbox[T]) Advance() {
	var zero T
	m.cur, m.next = m.next, m.cur
	m.have, m.ahed = m.ahed, m.have
	m.count = 0
	for j := range m.next {
		m.next[j], m.ahed[j] = zero, false
		if m.have[j] {
			m.count++
		}
	}
	m.round++
}
