// Package wcsp reads and writes weighted CSPs in the wcsp format of
// toulbar2 (the format of the Cost Function Library benchmarks).
//
// # Format
//
// A file is a sequence of white-space separated tokens; line breaks carry
// no meaning, but error messages name the line of the offending token:
//
//	name nbvars maxdomainsize nbfunctions ub    header; the name is one word
//	d0 d1 ...                                   domain size of each variable
//	arity var... defaultcost nbtuples           one cost function ...
//	val... cost                                 ... and nbtuples tuples
//
// Variables and values are 0-based indices. A function's table holds
// defaultcost except for the tuples listed. Every cost at or above the upper
// bound ub is infeasible. A function of arity 0 is a constant added to every
// solution (its cost is defaultcost, or the cost of its single tuple when
// nbtuples is 1, a line holding the cost alone).
//
// Shared tables are supported: a function written with a negative arity -k
// defines a table of arity k that later functions reuse by giving a
// negative nbtuples -n, which copies the n-th shared table (numbered from 1
// in order of definition) and needs the same arity and domain sizes.
//
// # Mapping
//
// Costs are non-negative 64-bit integers, as toulbar2 requires (toulbar2
// 1.1 silently mishandles negative ones); a cost ≥ ub becomes [mva.Hard].
// The constants of arity-0 functions add up into [mva.Problem.Offset],
// except an infeasible one (≥ ub), which stays a zero-arity function with
// cost Hard, since Offset must be finite. Variable i is called "x<i>", its
// values are labelled "0" to "d-1", and function i of the problem is called
// "f<i>" (numbered without the constants). The file has no agents: a single
// agent "a0" owns every variable, as the problem is centralised; the
// command line's agent options can repartition it. The problem's name is
// the header's name. The maximum domain size of the header must not be
// smaller than a domain. WCSP is a minimisation format, so Sense is
// [mva.Minimize].
//
// Not supported, and rejected with an error naming the line: interval
// domains (a negative domain size) and cost functions in intension or
// global cost functions (a default cost of -1 followed by a keyword such as
// salldiff, wregular or >=). Costs that are not integers, negative, or of
// 2^53 or more below ub (a float64 would round them) are errors as well.
// Readers refuse domains of more than 2^20 values, tables of more than 2^26
// entries and problems of more than 2^28 table entries in all, so that a
// small file cannot claim unbounded memory; nothing is allocated from a
// header count before the input backs it.
//
// # Writing
//
// [Write] writes the internal, minimised costs whatever the Sense: for a
// problem read from a maximisation file, the wcsp file minimises the negated
// utilities. Costs must be integers (below 2^53 in magnitude) or Hard; each
// function's most frequent cost becomes its default. Since wcsp costs are
// non-negative, a function whose smallest cost m is negative, as in every
// maximisation problem, is written shifted up by -m. The shifts, the offset
// and the finite zero-arity functions add up to a constant C, which is
// written as an arity-0 function when it is positive; the upper bound is 1
// plus the sum of the functions' largest (shifted) finite costs plus C, and
// hard entries are written as that bound.
//
// A negative C cannot be written: toulbar2 1.1 accepts a negative arity-0
// cost but then prints a wrong optimum. It is left out, so the file's cost
// of every assignment, and its optimum, is the internal one minus C:
//
//	wcsp optimum = internal optimum - min(C, 0)
//	C = Offset + sum of zero-arity costs + sum over functions of min(0, smallest finite cost)
//
// For a problem without negative costs (any wcsp file, any minimisation
// benchmark with non-negative costs) C is not negative, nothing is lost, and the wcsp
// optimum that toulbar2 prints is the internal optimum. For every file
// that Read accepts, Read(Write(Read(f))) equals Read(f).
//
// Labels, variable, function and agent names are not written: Read(Write(p))
// names and labels them as above. The problem's name loses its white space
// (replaced by "_") to stay one token.
package wcsp

// Limits on what a file may make the reader allocate.
const (
	maxDomainSize = 1 << 20 // values in one domain
	maxTableSize  = 1 << 26 // entries in one table
	maxTableTotal = 1 << 28 // entries over all tables
	maxTokenSize  = 1 << 12 // bytes in one token
)

// limits lets tests and fuzzing shrink the allocation caps.
type limits struct {
	domain, table, tableTotal int
}

func defaultLimits() limits {
	return limits{domain: maxDomainSize, table: maxTableSize, tableTotal: maxTableTotal}
}
