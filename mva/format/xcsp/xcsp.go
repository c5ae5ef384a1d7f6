// Package xcsp reads and writes DCOP instances in XCSP 2.1 as the FRODO
// framework writes them (format="XCSP 2.1_FRODO"), the usual format of
// published DCOP benchmarks.
//
// # Format
//
// A file is one <instance> element holding, in this order:
//
//	<presentation name="..." maximize="false" format="XCSP 2.1_FRODO"/>
//	<agents nbAgents="2"> <agent name="a1"/> ... </agents>
//	<domains nbDomains="1"> <domain name="d" nbValues="4">0..2 7</domain> </domains>
//	<variables nbVariables="3"> <variable name="x" domain="d" agent="a1"/> ... </variables>
//	<relations nbRelations="1">
//	  <relation name="r" arity="2" nbTuples="3" semantics="soft" defaultCost="0">
//	    5: 0 0|1 1|infinity: 2 7
//	  </relation>
//	</relations>
//	<constraints nbConstraints="1"> <constraint name="c" arity="2" scope="x y" reference="r"/> </constraints>
//
// A domain lists integers, intervals "lo..hi" and symbolic words separated
// by white space, in any mix. The tuples of a soft relation are separated by
// "|"; "cost:" before a tuple sets the cost of that tuple and of every
// following one until the next "cost:" (FRODO's abridged notation), and
// defaultCost is the cost of every tuple not listed. Tuples hold domain
// values, not indices.
//
// # Mapping
//
// Variables keep their names and their values' labels exactly as the file
// writes them (an interval lo..hi yields the labels of lo, lo+1, ..., hi in
// decimal); the index of a value is its position in the domain. A tuple
// value is matched to a label by its text and, failing that, by its integer
// value, so "01" in a tuple finds the label "1". Each constraint becomes one
// [mva.Function] named after the constraint, its table filled from the
// relation it references, so one relation may serve constraints over
// different domains.
//
// Everything in hearth minimises. In a file with maximize="true" every
// number is a utility: it is negated on the way in, -infinity (the
// infeasible utility) becomes [mva.Hard] and Sense is [mva.Maximize], so
// results are reported as utilities again. In a minimisation file infinity
// becomes Hard. The other infinity (+infinity when maximising, -infinity
// when minimising) would make the problem unbounded and is an error.
//
// Crisp relations (semantics "supports" or "conflicts") are read as hard
// constraints: the listed tuples cost 0 and the others are Hard, or the
// other way round. A soft relation without defaultCost must list every
// tuple of each constraint that uses it. A constraint with an empty scope
// becomes a zero-arity function.
//
// Agents are those of <agents>; a variable names its owner with its agent
// attribute. Variables without an agent attribute (plain XCSP 2.1 files have
// none) all go to a single agent "a0" (with underscores appended if the file
// already has an agent of that name): without ownership information the
// problem is centralised, and the command line's agent options can
// repartition it. The agent attribute of a constraint is ignored.
//
// Not supported, and rejected with an error naming the line: predicates and
// functions (intensional constraints), global constraints (a reference of
// the form "global:..."), constraints with parameters, random variables and
// <probabilities> (StochDCOP), and any element this package does not know.
// Every count attribute (nbAgents, nbValues, nbTuples, ...) is optional, but
// when present it must match what the element holds: FRODO writes them
// correctly, so a mismatch means a damaged file.
//
// Errors in the file are [mva.ParseError] values that carry the 1-based
// line of the offending element (of the offending tuple inside a
// relation). Read refuses domains of more than 2^20 values (2^22 over all
// domains), tables of more than 2^26 entries and problems of more than 2^28
// table entries in all, so that a small file, whose intervals and default
// costs expand, cannot claim unbounded memory. Variables of the same domain
// share one slice of labels.
//
// # Writing
//
// [Write] produces a file that FRODO and [Read] both read: one domain
// element per distinct list of labels (runs of three or more consecutive
// integers written as intervals), one relation per function whose
// defaultCost is the function's most frequent cost and whose other tuples
// are grouped by cost, and maximize="true" with utilities (negated costs)
// when Sense is Maximize. XCSP has no constant term, so a non-zero
// [mva.Problem.Offset] and the zero-arity functions are added up into one
// extra unary constraint of constant cost on the first variable, named
// "offset", which FRODO reads (Read reads it back as such a unary function,
// which has the same cost everywhere). Names and labels must be writable as
// XML, variable names and labels must not contain white space, and labels
// must not contain "|", ":" or "..", which the format reserves.
package xcsp

// Limits on what a file may make the reader allocate.
const (
	maxDomainSize  = 1 << 20 // values in one domain
	maxDomainTotal = 1 << 22 // values over all domains
	maxTableSize   = 1 << 26 // entries in one table
	maxTableTotal  = 1 << 28 // entries over all tables
)

// limits lets tests and fuzzing shrink the allocation caps.
type limits struct {
	domain, domainTotal, table, tableTotal int
}

func defaultLimits() limits {
	return limits{
		domain:      maxDomainSize,
		domainTotal: maxDomainTotal,
		table:       maxTableSize,
		tableTotal:  maxTableTotal,
	}
}
