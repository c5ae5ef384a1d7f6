// Package pydcop reads and writes DCOPs in the YAML format of the pyDCOP
// framework (Orange-OpenSource/pyDcop, docs/usage/file_formats/dcop_format.yml).
//
// # Format
//
// A file is one YAML mapping:
//
//	name: graph coloring
//	objective: min                  # or max
//	domains:
//	  colors: {values: [R, G]}      # or [0 .. 9]: the integers 0 to 9
//	variables:
//	  v1: {domain: colors, cost_function: -0.1 if v1 == 'R' else 0.1}
//	  v2: {domain: colors}
//	constraints:
//	  diff:                         # a Python expression over variables
//	    type: intention
//	    function: 10 if v1 == v2 else 0
//	  pref:                         # a table: cost: "tuple | tuple"
//	    type: extensional
//	    variables: [v1, v2]
//	    default: 0
//	    values:
//	      5: R G | G R
//	agents: [a1, a2]                # or a mapping with properties
//	distribution_hints:
//	  must_host: {a1: [v1], a2: [v2]}
//
// # Mapping
//
// objective: max negates every number on the way in and sets
// [mva.Maximize], so that the model still minimises; objective is
// mandatory, name is optional. Domain values keep the text the file writes
// as labels. In expressions they have the type YAML gives them, as in
// pyDCOP: integers and floats are numbers, true/false are booleans, and
// anything else (quoted values included) is a string. A list holding one
// string with "..", such as [1 .. 10], is pyDCOP's integer range; the
// scalar form values: 1..10 is accepted too. Labels must be distinct.
//
// Every constraint becomes a dense table ([mva.Function]); the name of the
// function is the constraint's name. An intentional constraint is compiled
// once and evaluated for every combination of its variables. Its scope is
// the variables the expression reads, in order of first appearance in the
// text (pyDCOP takes them from a set, so it has no order to keep). A
// constraint that reads no variable is a constant added to
// [mva.Problem.Offset]. A variable's cost_function is a unary function
// named "cost_<variable>" placed before the constraints; it may only read
// its own variable. The table of an extensional constraint starts from
// default and takes each listed assignment's cost; an assignment listed
// twice, or missing when there is no default, is an error. Tuples are
// split at "|" and white space, as pyDCOP does; a value may also be
// quoted, 'like this', to hold spaces or "|" (pyDCOP's own sample writes
// such a value but cannot read it). A token matches the label of a domain
// value, or else its Python str() form (True for a YAML true).
//
// pyDCOP has no hard constraints: files use large costs, which are kept as
// costs. A cost of .inf (YAML's infinity, which PyYAML reads as a float)
// or an expression returning float('inf') is [mva.Hard]; with objective:
// max, a utility of -.inf is. The writer uses .inf for Hard entries.
//
// external_variables are read as constants: their initial_value (which
// must lie in their domain) is substituted wherever an expression reads
// them. An intentional constraint's partial mapping freezes variables the
// same way. A variable's noise_level (random noise), routes, hosting_costs
// and host_with hints are ignored.
//
// # Function bodies and source files
//
// As in pyDCOP, a function text holding the keyword return is a function
// body rather than an expression: statements if/elif/else, return, pass
// and assignments to local names (=, +=, -=, *=, /=, //=, %=, **=), with
// Python's indentation rules, comments and docstrings. Its variables are
// the names it reads and never assigns (pyDCOP's rule); reading a local
// before assigning it, or ending without return, is an error for the
// assignment that does it. A constraint with source: names a Python file,
// relative to the DCOP file ([ReadFile], [ReadSources]); the file may only
// hold functions (def name(a, b): body) and docstrings, which call each
// other by name and which the constraint's function calls as
// source.name(x, y). Loops, imports, classes, nested functions, default
// arguments and recursion are refused with the file and line, so that one
// evaluation does a bounded amount of work, known before it starts (at most
// 2^20 operators); nothing is ever executed as Python.
//
// Each variable belongs to one agent ([mva.Variable.Agent]). A variable
// named in distribution_hints.must_host belongs to that agent (must_host
// may also name constraints, which are ignored). When there are no such
// hints and exactly as many agents as variables, variable i goes to agent
// i in file order, pyDCOP's usual one-variable-per-agent case. Otherwise
// every variable not placed by a hint goes to the agent named "a0", which
// is created (last) when the file has none; the command line's agent
// options can repartition the problem.
//
// # Expressions
//
// Intentional constraints are written in a subset of Python 3 expressions,
// parsed and evaluated here without running Python: int, float and string
// literals, True and False, variable names, + - * / // % ** and unary - and
// +, comparisons == != < <= > >= (chained as in Python: a < b < c), and,
// or and not (returning an operand, as in Python), conditional expressions
// x if c else y, parentheses, and the calls abs, min and max (two or more
// arguments), round (one or two), int, float, bool and pow (two). The
// semantics are Python's: / is true division, // and % floor (-7 // 2 is
// -4, -7 % 2 is 1), ** binds tighter than unary minus (-2**2 is -4) and is
// right-associative, and strings only compare with strings (== and != work
// between any types). Integers are 64-bit; an overflow where Python would
// grow a big integer is an error, as are division by zero, unknown names
// and unknown functions. A result is a cost: numbers as they are, False
// and True as 0 and 1; NaN, -inf and strings are errors.
//
// # Limits
//
// A table holds at most 2^24 entries, all tables together 2^25, and all
// domains together 2^20 values, so that a short file cannot make the
// reader allocate without bound.
//
// # Writing
//
// [Write] produces a file that [Read] turns back into the same problem:
// one domain per distinct list of labels (d0, d1, …), every variable, every
// function as an extensional constraint whose default is its most frequent
// cost, the offset and any zero-arity functions as one constant
// intentional constraint, the agents as a list and the owner of every
// variable as a must_host hint. Costs are written with the shortest
// decimal that reads back exactly, non-integers always with a point so
// that PyYAML (YAML 1.1) reads them as floats too. With [mva.Maximize] the
// file says objective: max and holds utilities, the negated costs.
package pydcop
