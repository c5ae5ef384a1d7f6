package gen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Param describes a parameter of Generate, for the command line's help.
type Param struct {
	Name    string
	Default string
	Doc     string
}

// param is a Param bound to a field of an options struct.
type param struct {
	Param
	set func(string) error
}

// kind is a generator with its parameters bound to a fresh options value.
type kind struct {
	params []param
	run    func(seed uint64) (*mva.Problem, error)
}

// Kinds returns the kinds Generate knows.
func Kinds() []string {
	return []string{"random", "radar", "meeting", "grid", "scalefree", "randgraph", "microgrid", "fap", "spot", "circuit"}
}

// Params returns the parameters of a kind with their defaults.
func Params(name string) ([]Param, error) {
	k, err := lookup(name)
	if err != nil {
		return nil, err
	}
	out := make([]Param, len(k.params))
	for i, p := range k.params {
		out[i] = p.Param
	}
	return out, nil
}

// Generate builds the instance of a kind for seed, starting from the
// kind's defaults and applying params (name → value, as the command line
// writes them: "agents=8 vars=6 domain=4"). An unknown kind or parameter,
// or a value that does not parse, is an error that names it.
func Generate(name string, seed uint64, params map[string]string) (*mva.Problem, error) {
	k, err := lookup(name)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(params))
	for key := range params {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		i := slices.IndexFunc(k.params, func(p param) bool { return p.Name == key })
		if i < 0 {
			names := make([]string, len(k.params))
			for j, p := range k.params {
				names[j] = p.Name
			}
			return nil, fmt.Errorf("gen %s: unknown parameter %q (valid: %s)", name, key, strings.Join(names, ", "))
		}
		if err := k.params[i].set(params[key]); err != nil {
			return nil, fmt.Errorf("gen %s: parameter %s: %w", name, key, err)
		}
	}
	return k.run(seed)
}

func lookup(name string) (kind, error) {
	switch name {
	case "random":
		o := DefaultRandom()
		return kind{[]param{
			intP("agents", "number of agents |A|", &o.Agents),
			intP("vars", "local variables per agent |L_i|", &o.Vars),
			intP("domain", "values per variable |D_i|", &o.Domain),
			floatP("p1l", "local density p1ˡ", &o.LocalDensity),
			floatP("p1g", "global density p1ᵍ among boundary variables", &o.GlobalDensity),
			floatP("ratio", "boundary ratio |B_i|/|L_i|", &o.BoundaryRatio),
			floatP("p2", "tightness p2: fraction of feasible entries", &o.Tightness),
			intP("arity", "highest function arity", &o.MaxArity),
			intP("min_cost", "least cost of a feasible entry", &o.MinCost),
			intP("max_cost", "greatest cost of a feasible entry", &o.MaxCost),
			boolP("plant", "make a random assignment feasible", &o.Plant),
		}, func(s uint64) (*mva.Problem, error) { return Random(s, o) }}, nil
	case "radar":
		o := DefaultRadar()
		return kind{[]param{
			sizeP("grid", "radar grid COLSxROWS, as in Table 3.1 (8x4 ... 20x8)", &o.Cols, &o.Rows),
			sizeP("block", "radars per controller COLSxROWS", &o.BlockCols, &o.BlockRows),
			floatP("range", "sensing range in grid spacings", &o.Range),
			intP("arity", "most radars per phenomenon", &o.MaxArity),
			intP("max_size", "most radars a phenomenon needs at once", &o.MaxSize),
			intP("min_weight", "least weight of a phenomenon", &o.MinWeight),
			intP("max_weight", "greatest weight of a phenomenon", &o.MaxWeight),
			floatP("critical", "probability that a phenomenon must be observed", &o.Critical),
			intP("phenomena", "least number of phenomena", &o.Phenomena),
			boolP("plant", "keep the instance feasible", &o.Plant),
		}, func(s uint64) (*mva.Problem, error) { return Radar(s, o) }}, nil
	case "meeting":
		o := DefaultMeeting()
		return kind{[]param{
			intP("agents", "number of people", &o.Agents),
			intP("vars", "events per agent", &o.Vars),
			intP("domain", "time slots", &o.Slots),
			floatP("p1l", "density of each agent's conflict graph", &o.LocalDensity),
			intP("meetings", "shared meetings", &o.Meetings),
			intP("span", "reports per manager", &o.Span),
		}, func(s uint64) (*mva.Problem, error) { return Meeting(s, o) }}, nil
	case "grid":
		o := DefaultGrid()
		return kind{append([]param{
			intP("rows", "grid rows", &o.Rows),
			intP("cols", "grid columns", &o.Cols),
		}, graphParams(&o.GraphOptions)...), func(s uint64) (*mva.Problem, error) { return Grid(s, o) }}, nil
	case "scalefree":
		o := DefaultScaleFree()
		return kind{append([]param{
			intP("agents", "number of agents", &o.Agents),
			intP("links", "links per new agent (m)", &o.Links),
		}, graphParams(&o.GraphOptions)...), func(s uint64) (*mva.Problem, error) { return ScaleFree(s, o) }}, nil
	case "randgraph":
		o := DefaultRandGraph()
		return kind{append([]param{
			intP("agents", "number of agents", &o.Agents),
			floatP("p1", "density p1", &o.Density),
		}, graphParams(&o.GraphOptions)...), func(s uint64) (*mva.Problem, error) { return RandGraph(s, o) }}, nil
	case "microgrid":
		o := DefaultMicrogrid()
		return kind{[]param{
			intP("agents", "number of buildings", &o.Agents),
			intP("cluster", "buildings per cluster", &o.ClusterSize),
			intP("links", "links per new building (m)", &o.Links),
			floatP("triad", "probability of triad formation", &o.Triad),
			intP("domain", "values per variable (odd)", &o.Domain),
			intP("arity", "highest function arity", &o.MaxArity),
			floatP("generators", "fraction of buildings that generate", &o.Generators),
			intP("max_degree", "most power lines per building (bounds MVA tables)", &o.MaxDegree),
		}, func(s uint64) (*mva.Problem, error) { return Microgrid(s, o) }}, nil
	case "fap":
		o := DefaultFAP()
		return kind{[]param{
			intP("pairs", "duplex pairs of radio links (agents)", &o.Pairs),
			intP("freqs", "frequencies per link (even)", &o.Freqs),
			floatP("radius", "distance within which pairs interfere (unit square)", &o.Radius),
			intP("sep", "frequency separation the closest pairs need", &o.Sep),
			floatP("mobility", "fraction of links with a preferred frequency", &o.Mobility),
		}, func(s uint64) (*mva.Problem, error) { return FAP(s, o) }}, nil
	case "spot":
		o := DefaultSpot()
		return kind{[]param{
			intP("photos", "candidate photographs (agents)", &o.Photos),
			floatP("stereo", "fraction of stereo photographs", &o.Stereo),
			intP("window", "track positions within which photographs conflict", &o.Window),
			floatP("conflict", "probability that two close photographs conflict", &o.Conflict),
			floatP("recorder", "probability of a recorder limit on three close photographs", &o.Recorder),
		}, func(s uint64) (*mva.Problem, error) { return Spot(s, o) }}, nil
	case "circuit":
		o := DefaultCircuit()
		return kind{[]param{
			intP("inputs", "primary inputs and flip-flop outputs", &o.Inputs),
			intP("gates", "gates (one line each)", &o.Gates),
			intP("fanin", "most inputs of a gate", &o.FanIn),
			intP("window", "how many of the lines made just before a gate it may read", &o.Window),
			floatP("fault", "probability of a faulty gate in the simulated run that gives the observations", &o.Fault),
			floatP("observe", "fraction of lines observed besides the outputs", &o.Observe),
		}, func(s uint64) (*mva.Problem, error) { return Circuit(s, o) }}, nil
	}
	return kind{}, fmt.Errorf("gen: unknown kind %q (valid: %s)", name, strings.Join(Kinds(), ", "))
}

func graphParams(o *GraphOptions) []param {
	return []param{
		intP("domain", "values per variable", &o.Domain),
		intP("min_cost", "least cost of a feasible entry", &o.MinCost),
		intP("max_cost", "greatest cost of a feasible entry", &o.MaxCost),
		floatP("p2", "tightness p2: fraction of feasible entries", &o.Tightness),
		boolP("plant", "make a random assignment feasible", &o.Plant),
	}
}

func intP(name, doc string, x *int) param {
	return param{Param{name, strconv.Itoa(*x), doc}, func(s string) error {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		*x = v
		return nil
	}}
}

func floatP(name, doc string, x *float64) param {
	return param{Param{name, strconv.FormatFloat(*x, 'g', -1, 64), doc}, func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*x = v
		return nil
	}}
}

func boolP(name, doc string, x *bool) param {
	return param{Param{name, strconv.FormatBool(*x), doc}, func(s string) error {
		v, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		*x = v
		return nil
	}}
}

// sizeP binds a "COLSxROWS" parameter.
func sizeP(name, doc string, cols, rows *int) param {
	def := strconv.Itoa(*cols) + "x" + strconv.Itoa(*rows)
	return param{Param{name, def, doc}, func(s string) error {
		a, b, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
		c, err1 := strconv.Atoi(a)
		r, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("%q is not COLSxROWS, such as 8x4", s)
		}
		*cols, *rows = c, r
		return nil
	}}
}
