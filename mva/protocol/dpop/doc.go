// Package dpop is DPOP (Petcu & Faltings 2005) between multi-variable
// agents: the agents arrange themselves in a DFS pseudo-tree, every agent
// sends its parent one UTIL table over its separator, and the root's
// decision flows back down in VALUE messages. Under the MVA decomposition
// (thesis §2.1.4 and §3, DMCMC's CALCUTILS) agent i's message is
//
//	UTIL_i(sep) = min over b ∈ D(B_i) of [ MVA_i(b) + Σ f(b, sep) + Σ_c UTIL_c ]
//
// where MVA_i is the agent's whole MVA table (one row per joint assignment
// of its boundary variables B_i), the f are the functions between agents
// for which i is the lowest agent of the scope in the pseudo-tree, and the
// UTIL_c come from its children. The protocol is complete: the result is
// optimal, and every agent learns the optimum's cost.
//
// # Eliminating the boundary variables
//
// B_i is projected out with package local's join-project kernel, one
// variable at a time (bucket elimination inside the agent), not in one join
// over |B_i|+|sep| variables: that join costs |D(B_i)|·|D(sep)| entries,
// which made DPOP slower under MVA than on the decomposition, where the
// same variables are eliminated one per pseudo-agent. The MVA table couples
// all of B_i, so every step's table holds the boundary variables not yet
// eliminated plus the separator variables of the eliminated ones; the order
// that minimises the total entries is found exactly, by dynamic programming
// over subsets of B_i (up to 12 boundary variables and where the join is
// large enough to repay it; greedily, cheapest step first, otherwise), and
// a plan may end with a joint step over several
// variables where that is cheaper. Joins under 4 096 entries are not split.
// Every step, and the pre-merge of the small factors a step reads (see
// premerge), runs through the Kernel, and every table is checked against
// max_util_entries; single steps whose table would exceed it are not
// planned, the joint elimination being always possible. The UTIL sent is
// the same function as the joint elimination's: only its cost changes.
//
// A GPU build runs the steps through a Chain (WithChains; package
// local/gpu's UtilChain), which keeps the tables that only feed the next
// step in device memory; their Costs stay nil, a step the chain does not
// take brings them back first (Chain.Host), and the UTIL table and the
// argmin tables come back into Go memory. The messages are the same.
//
// The VALUE phase decodes B_i from the steps' argmin tables, last step
// first (bucket elimination's back substitution): each step's output
// variables are separator variables or variables of later steps, whose
// values are then known. The argmin tables are kept until VALUE arrives,
// one int32 per entry of every step's output. Ties go to the smallest
// value of each step, so the assignment among equally good ones may
// differ from the joint elimination's, never its cost.
//
// # Messages
//
// Every body is written with package wire and validated when read.
//
//   - DFS_DEGREE (degree): sent once to every neighbour at Start, so that
//     the token holder can visit the most connected neighbour first. Not
//     sent under heuristic 1.
//   - DFS_TOKEN (path, visited): the DFS token going down a tree edge. path
//     is the root-to-sender chain (the receiver's ancestors); visited is
//     every agent the DFS has reached, so that no agent is ever probed
//     twice and back edges cost no message.
//   - DFS_RETURN (visited): the token coming back up once the sender's
//     subtree is complete.
//   - UTIL (variables, costs): the separator table, over problem variable
//     ids in increasing order; Hard entries stay +Inf.
//   - VALUE (cost, values): the optimum's cost and the values of the
//     receiver's separator variables, in the order of its UTIL message.
//
// A run sends exactly 2|E| + 4(|A|−1) messages, |E| being the edges of
// the agent graph: one DFS_DEGREE each way on every edge (none under
// heuristic 1), then a DFS_TOKEN, a DFS_RETURN, a UTIL and a VALUE on each
// of the |A|−1 edges of the tree, which spans every agent (see below for
// the virtual edges that join disconnected components).
//
// # Decisions
//
// The root is agent 0, fixed: electing a better root (the most connected
// agent, say) needs a distributed election with its own messages and
// termination detection, while a fixed root lets the DFS start at once and
// makes the tree a pure function of the graph. Children are visited most
// neighbours first, ties to the lowest id (FRODO's default heuristic);
// param heuristic=1 visits the lowest id first and saves the DFS_DEGREE
// exchange.
//
// A disconnected agent graph gets one pseudo-tree per component, rooted at
// the component's lowest agent id: when agent 0's DFS has exhausted its
// component, agent 0 sends the token to the lowest unvisited agent, which
// becomes a virtual child (no function links it to agent 0, so its UTIL is
// a single number). This costs four messages per extra component and buys
// two things a forest could not give: every component knows when its turn
// comes without an election, and the root sums the components' optima so
// that every agent reports the exact total cost. An agent without
// neighbours is such a component: its UTIL is its best MVA row.
//
// The token carries the visited set, so the DFS needs one message down and
// one up per tree edge and none for back edges; pseudo-parents are the
// neighbours in the token's path, pseudo-children the neighbours that are
// neither ancestors nor children once the subtree returns. A DFS over an
// undirected graph is a valid pseudo-tree, so every function's agents lie
// on one root path, and the deepest of them (the one whose other agents
// are all its ancestors) joins the function: each function is counted once.
//
// An agent starts its UTIL as soon as its subtree's DFS is complete and its
// children's UTILs are in; it sends DFS_RETURN and UTIL on the same link,
// so FIFO delivery lets its parent trust the order. Subtrees therefore
// compute while the token is still exploring elsewhere.
//
// The MVA table is read whole, row by row through the row oracle (lazy
// tables fill on demand, eager ones are already full): DPOP does no
// pruning, so every row is needed. The kernel runs with one worker on the
// agent's own goroutine, so that a protocol spawns no goroutine and the
// simulated clock charges the agent for exactly the work it did.
//
// The root adds Problem.Offset, the constant part of the objective, to its
// optimum, so that the reported cost is the true cost of the assignment.
// An infeasible problem ends normally with cost +Inf and some assignment
// (the kernel's argmin of all-Hard rows is the first value).
//
// # Parameters (Config, read by ParseConfig)
//
//   - max_util_entries (default 1<<24): the largest UTIL table an agent
//     builds or accepts. A larger separator is an error naming the agent and
//     the separator's size, instead of an out-of-memory crash.
//   - heuristic (default 0): 0 visits the most connected neighbour first
//     (needs DFS_DEGREE), 1 the lowest id first.
//
// # Metrics
//
// The agent is a pipeline.CheckCounter: its checks are the entries of its UTIL
// joins, Σ over steps of output rows × eliminated assignments (at most
// |D(sep)| × |D(B_i)|, the joint join's, plus a quarter for pre-merges),
// each being one sum of the joined functions at one joint assignment, the
// unit DPOP's NCCC counts. The local solver's
// checks for filling the MVA table are counted by the runtime separately.
package dpop
