package live

import (
	"math"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// HomePriceTopic is P/home/H/prices/<what> (import or export): a home's
// own price series, for a home whose tariff is not the street's.
func HomePriceTopic(prefix, home, what string) string {
	return prefix + "/" + levelHome + "/" + home + "/" + levelPrices + "/" + what
}

// applyHomePrices puts home hi's own published price series
// (HomePriceTopic) over the tariff it has in n: its own (a home's
// [prices]) or else the street's, with the street's series already in.
// A slot the series does not cover keeps that tariff's price; an export
// price above its slot's import price is capped to it, as the street's
// are. Without a series of its own the home's tariff is left alone.
// in.mu is held.
func (in *Inputs) applyHomePrices(n *devices.Neighbourhood, hi int, slot func(t int) (time.Time, time.Time)) {
	h := &n.Homes[hi]
	imp, impOK := in.series[HomePriceTopic(in.prefix, h.Name, "import")]
	exp, expOK := in.series[HomePriceTopic(in.prefix, h.Name, "export")]
	if !impOK && !expOK {
		return
	}
	baseImp, baseExp := n.Tariff(hi)
	prices := slices.Clone(baseImp)
	if impOK {
		for t := range prices {
			if v, ok := imp.Mean(slot(t)); ok {
				prices[t] = v
			}
		}
	}
	var export []float64
	switch {
	case expOK && baseExp == nil:
		// Feed-in earned the import price: it goes on doing so where
		// the series does not say otherwise.
		export = slices.Clone(prices)
	default:
		export = slices.Clone(baseExp)
	}
	if expOK {
		for t := range export {
			if v, ok := exp.Mean(slot(t)); ok {
				export[t] = v
			}
		}
	}
	for t := range export {
		export[t] = math.Min(export[t], prices[t])
	}
	if h.Meter == nil {
		h.Meter = &devices.Meter{}
	} else {
		m := *h.Meter // the file's meter is the config's: not written to
		h.Meter = &m
	}
	h.Meter.Prices, h.Meter.ExportPrices = prices, export
}
