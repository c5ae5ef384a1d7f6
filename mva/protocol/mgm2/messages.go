package mgm2

import (
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Message kinds.
const (
	KindValue  = "VALUE"
	KindOffer  = "OFFER"
	KindAccept = "ACCEPT"
	KindReject = "REJECT"
	KindGain   = "GAIN"
	KindGo     = "GO"
	KindNoGo   = "NOGO"
)

// offer is an entry of an OFFER the agent sent: its own row v_i, the
// partner's visible value w and the offerer's gain o. Only w and o travel;
// the receiver answers with the entry's index.
type offer struct {
	row  int
	w    int
	gain localsearch.Cost
}

// offerIn is an entry of an OFFER received.
type offerIn struct {
	w    int
	gain localsearch.Cost
}

// answer is an ACCEPT (accept true, with the entry and joint gain) or a
// REJECT.
type answer struct {
	accept bool
	entry  int
	gain   localsearch.Cost
}

func (a *Agent) msg(to int, kind string, w *wire.Writer) mva.Message {
	return mva.Message{From: a.node.ID, To: to, Kind: kind, Body: w.Bytes()}
}

func (a *Agent) header() *wire.Writer {
	w := &wire.Writer{}
	w.Int(int64(a.round))
	return w
}

// receive decodes m and files it in its mailbox.
func (a *Agent) receive(m mva.Message) error {
	j, err := a.nb.Position(m.From)
	if err != nil {
		return err
	}
	if a.phase == finished {
		return fmt.Errorf("message after the last round")
	}
	r := wire.NewReader(m.Body)
	round := r.IntIn(1, a.rounds+1)
	switch m.Kind {
	case KindValue:
		vals := a.nb.ReadValuesTo(r, j)
		if err := r.Err(); err != nil {
			return err
		}
		return a.values.Put(round, j, vals)
	case KindOffer:
		n := r.Len(10) // ≥ 1 byte of w, 1 of hard, 8 of soft
		entries := make([]offerIn, 0, n)
		for range n {
			w := r.IntIn(0, a.nb.OwnVisibleRows(j))
			g, err := localsearch.ReadCost(r)
			if err != nil {
				return err
			}
			entries = append(entries, offerIn{w: w, gain: g})
		}
		if err := r.Err(); err != nil {
			return err
		}
		return a.offers.Put(round, j, entries)
	case KindAccept:
		entry := r.IntIn(0, maxEntries)
		g, err := localsearch.ReadCost(r)
		if err != nil {
			return err
		}
		if err := r.Err(); err != nil {
			return err
		}
		return a.answers.Put(round, j, answer{accept: true, entry: entry, gain: g})
	case KindReject:
		if err := r.Err(); err != nil {
			return err
		}
		return a.answers.Put(round, j, answer{})
	case KindGain:
		g, err := localsearch.ReadCost(r)
		if err != nil {
			return err
		}
		if err := r.Err(); err != nil {
			return err
		}
		return a.gains.Put(round, j, g)
	case KindGo, KindNoGo:
		if err := r.Err(); err != nil {
			return err
		}
		return a.gos.Put(round, j, m.Kind == KindGo)
	}
	return fmt.Errorf("unknown message kind")
}
