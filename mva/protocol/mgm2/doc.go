// Package mgm2 is MGM-2 (Maheswaran, Pearce and Tambe 2004): MGM with
// coordinated moves of two neighbouring agents, over multi-variable agents,
// following notes/protocols-afb-dgibbs.md §4.
//
// An agent's value is a joint assignment of its boundary variables (an MVA
// table row) with its best completion as the interior, and its cost of a row
// is ℓ_i(b) = row cost + the external functions with the neighbours'
// current values, as in package mgm. A round has five waves, every message
// stamped with the round:
//
//	VALUE(r, values)      to every neighbour (its boundary variables the
//	                      receiver shares a function with)
//	OFFER(r, entries)     to every neighbour; an offerer's chosen partner
//	                      gets its joint moves, everyone else an empty list
//	ACCEPT(r, entry, G) / REJECT(r)
//	                      one answer to every non-empty offer
//	GAIN(r, gain)         to every neighbour
//	GO(r) / NOGO(r)       between the two agents of a committed pair
//
// With probability offer_prob an agent is an offerer: it picks one
// neighbour p uniformly and offers joint moves (v_i, w_p) with its own gain
// o = ℓ_i(d_i) − ℓ_i(v_i | p at w_p), shared functions included. Under MVA,
// w_p is a joint value of only those of p's boundary variables that share a
// function with the offerer (the only part of p the offerer can evaluate);
// the receiver extends it with the best values of its other boundary
// variables. A receiver (non-offerer) evaluates each entry as
// G = o + ℓ_p^{¬i}(d_p) − ℓ_p^{¬i}(v_p), where ℓ^{¬i} leaves out the
// functions involving the offerer (already in o), accepts the best entry
// over all offers iff G* > 0 and rejects the rest; offerers reject every
// offer they receive. A committed agent announces G*, others their
// unilateral MGM gain. A committed pair moves iff both agents' gain beats
// every other neighbour's strictly; an uncommitted agent moves as in MGM
// (larger gain, ties to the lower id). No two neighbours that are not
// partners move together, so the global cost drops by exactly the realised
// gains: MGM-2 is monotone (its last assignment is its best) and a fixed
// point is 2-optimal.
//
// Messages per round: 3·Σ_i |N_i| (VALUE, OFFER, GAIN) + one answer per
// non-empty offer + 2 per committed pair (notes §5).
//
// Decisions:
//   - Offers carry every joint move by default (parameter positive_offers
//     = 0), as in the paper's description, not only those with o > 0 as the
//     notes, FRODO and pyDCOP do: a joint move can improve the total while
//     both agents' own gains are negative (each pays for the shared
//     function the other profits from), and filtering such moves out leaves
//     fixed points that are not 2-optimal (TestPositiveOffersMiss2Opt).
//     positive_offers = 1 restores the filter.
//   - max_offers (default 0, no limit) keeps only the best K entries of an
//     offer by o, bounding OFFER at O(K) instead of O(|Dom_i|·|Dom_p|).
//   - accept_over_unilateral = 1 is pyDCOP's variant: accept only when G*
//     also exceeds the receiver's unilateral gain. Off by default (the
//     notes' rule).
//   - Costs and gains are (hard violations, soft sum) pairs compared
//     lexicographically. Ties: the current row is kept, then the lowest
//     row; the first best offer entry in (offerer id, entry) order wins.
//   - The initial assignment is a seeded random row (init = 1), as in MGM;
//     Result's Cost is NaN (no global view).
//   - The unilateral move is localsearch.Responder's, as in MGM: the
//     table is enumerated up to localsearch.EnumerateRows rows and solved
//     past it, with response = 3 where bucket elimination is too wide by
//     an exact solve (local.Exact) within response_checks and past them
//     by block descent (parameters response, response_entries, response_checks,
//     response_width, response_total, block_entries). Joint moves
//     still enumerate the agent's rows: an offer lists them, and the
//     receiver's best extensions range over them.
//
// Parameters: rounds (default 50), offer_prob (0.5), positive_offers (0),
// max_offers (0), accept_over_unilateral (0), init (1), response (0),
// response_entries (localsearch.DefaultResponseEntries), response_checks
// (localsearch.DefaultResponseChecks), response_width (0, none),
// response_total (0, none), block_entries (localsearch.BlockEntries).
package mgm2
