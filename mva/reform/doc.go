// Package reform maps a problem whose agents own several variables onto
// the problem a protocol actually runs on. It holds hearth's own choice,
// MVA, and the two classic reformulations the thesis compares it with
// (Fioretto, PhD thesis, §3.1, after Yokoo 2001 and Burke & Brown 2006),
// which exist here as baselines:
//
//   - MVA leaves the problem as it is: each agent keeps its variables and
//     solves its interior locally (the MVA decomposition, package mva).
//   - Decomposition gives every variable its own pseudo-agent. Functions
//     inside one real agent become functions between pseudo-agents, so
//     protocols exchange messages inside a real agent; Owner lets the
//     runtime count them as internal (pipeline.Run.Owner), as the thesis
//     does (98 external and 60 internal AFB messages on its Figure 3.1).
//   - Compilation gives every agent a single pseudo-variable whose domain
//     is the Cartesian product of its variables' domains. Its local cost
//     becomes a unary function and every function between agents is
//     re-expressed over the pseudo-variables of the agents it touches.
//     Domains and tables grow exponentially with the number of variables
//     an agent owns; Compilation refuses, with ErrTooLarge, what would not
//     fit in a given number of table entries. That refusal is the point of
//     the baseline: it is what MVA avoids.
//
// Every reformulation comes with Back, which turns a complete assignment
// of the reformulated problem into one of the original problem with the
// same cost, so results are always reported on the original variables.
//
// Reformulated problems share cost tables with the original problem where
// they can; neither must be modified while the other is in use.
package reform
