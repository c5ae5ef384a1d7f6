// Package afb is Asynchronous Forward Bounding (Gershman, Meisels and
// Zivan, JAIR 2009) over multi-variable agents: MVA-AFB, chapter 3 of the
// thesis, implemented as notes/protocols-afb-dgibbs.md §1 specifies it.
//
// # The protocol
//
// Agents stand in a fixed total order and extend one current partial
// assignment (CPA) one agent at a time, as synchronous branch and bound
// does. Under MVA an agent's "value" is a whole MVA-table row: a joint
// assignment of its boundary variables, whose cost is the row's local
// optimum plus the external functions the agent owns; its interior values
// are the row's completion and never leave the agent. After extending the
// CPA an agent also sends a copy to every later agent, which answers with a
// lower bound on its share of any completion; as soon as the CPA cost plus
// these estimates reaches the upper bound B, the agent moves on to its next
// row while the CPA is still travelling forward. The last agent announces
// every improving complete assignment, which lowers B everywhere, and the
// first agent ends the search when it runs out of rows.
//
// # Messages
//
//   - CPA_MSG: forward from position k to k+1 (the extended CPA), or
//     backward from k to k−1 ("every completion of your current row is
//     exhausted or pruned"), the backtrack carrying the sender's best
//     solution and its cost.
//   - FB_CPA: a CPA copy from position k to every later agent, the next
//     one included.
//   - FB_ESTIMATE: the answer to FB_CPA, echoing its timestamps.
//   - NEW_SOLUTION: from the last agent to every other agent, an improving
//     complete assignment and its cost.
//   - TERMINATE: from the first agent to every other agent, the final
//     answer.
//   - LB: only with afb_hplus, each agent's local lower bound, sent once to
//     every earlier agent before the search starts.
//
// A CPA carries one row index per assigned agent (the mixed-radix code of
// its boundary values, mva.LocalProblem.EncodeRow), a timestamp vector, its
// cost and the cost shift of its agents (below). Bodies are written with
// package wire and every decoder checks ranges, lengths and the sender's
// position before the agent's state is touched.
//
// # Parameters (mva.Node.Params, read into Config by ParseConfig)
//
//   - afb_order: the agent order. 0 (default) ascending id; 1 maximum
//     agent degree first, ties by id; 2 FRODO-like, most links to agents
//     already ordered, ties by the smaller number of rows, then by id.
//   - afb_candidates: the order in which an agent tries its rows. 0
//     (default) best first, by row cost + owned functions + future bound,
//     rebuilt for each prefix; 1 best first by the prefix-independent row
//     cost + future bound, sorted once; 2 lexicographic (the thesis's
//     order), which asks only for the rows that pass a pre-test, so an
//     MVA-lazy table is never filled more than the search needs.
//   - afb_estimate: the lower bound an agent returns for FB_CPA. 0
//     (default) exact, the minimum over all its rows; 1 hybrid, rows not
//     yet computed count as 0, so a lazy table is never filled by an
//     estimate; 2 decoupled, the minimum over the functions it owns plus
//     its local lower bound, which reproduces the thesis's printed
//     estimates.
//   - afb_hplus: 1 adds the sum of the later agents' local lower bounds to
//     the assigning agent's test (off by default: agents publish a scalar
//     and an extra LB message wave is needed).
//   - afb_zero_stop: 1 stops the search as soon as a solution of cost 0 is
//     found, as FRODO does (off by default).
//   - afb_recheck: 1 re-tests the current row against a lower bound that a
//     NEW_SOLUTION brings (off by default; it changes message counts).
//
// # Decisions
//
// Every rule follows the notes; where the notes leave a choice open:
//
//   - Disconnected agent graphs run as one AFB instance over a single
//     order of all agents. The notes allow one instance per component too,
//     which searches less, but then no agent knows the total cost and each
//     component needs its own termination; one order is simpler, correct
//     (the sum of independent parts is still bounded by every estimate) and
//     keeps AgentResult.Cost the true total. Agents with no boundary
//     variables have one row and take part like any other.
//   - AFB needs non-negative costs (notes §0.1). Every agent that
//     evaluates an external function shifts it by min(0, its smallest
//     finite entry), and each agent shifts its rows by the sum of
//     min(0, smallest finite entry) over its local functions: the only
//     thing the protocol reads of its local functions, a constant that is
//     0 for non-negative problems, so nothing changes for them. When an
//     agent assigns itself it adds its shift (its rows' and its owned
//     functions') to the CPA, so the last agent knows the total constant
//     and puts it in every solution it announces. Costs are reported in
//     the original scale, Problem.Offset included.
//   - The local lower bound LB (decoupled estimates, the lexicographic
//     pre-test, afb_hplus) is the minimum over the agent's MVA-table rows:
//     free for an eager table; a lazy one is filled the first time a mode
//     that needs LB asks, since mva.LocalSolver has no solve with the
//     boundary free (which would make it one local solve). The
//     lexicographic pre-test uses LB only once it is known and 0 before,
//     which gives the same decisions; hybrid estimates count unknown rows
//     as 0 rather than LB for the same reason. The defaults (best first,
//     exact estimates) need every row, so with them a lazy table fills up
//     at the first prefix; afb_candidates=2 with afb_estimate=1 is the
//     configuration that computes only the rows the search reaches.
//   - Counters are never reset, and the CPA carries boundary rows only
//     (the optional "full CPA" trace mode of the notes is not implemented:
//     it never affects a decision and would leak interior values).
//   - The protocol draws no random numbers: its messages depend on the
//     delivery order only.
package afb
