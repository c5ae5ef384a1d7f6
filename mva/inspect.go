package mva

// AgentInspection is one agent's figures in an Inspection.
type AgentInspection struct {
	Agent     string `json:"agent"`
	Local     int    `json:"local"`
	Boundary  int    `json:"boundary"`
	Interior  int    `json:"interior"`
	LocalFns  int    `json:"local_functions"`
	External  int    `json:"external_functions"`
	Width     int    `json:"induced_width"`
	MinDomain int    `json:"min_domain"`
	MaxDomain int    `json:"max_domain"`
	// Rows is the number of MVA table rows, -1 when it overflows.
	Rows int `json:"mva_rows"`
}

// Inspection is the MVA decomposition of a problem in figures (`hearth
// inspect`, whose --json prints it): the problem's size and induced
// width, and per agent its local, boundary and interior variables, its
// functions, the induced width of its MVA table and the table's rows.
type Inspection struct {
	Instance  string            `json:"instance"`
	Sense     string            `json:"sense"`
	Variables int               `json:"variables"`
	Functions int               `json:"functions"`
	External  int               `json:"external_functions"`
	MaxArity  int               `json:"max_arity"`
	Width     int               `json:"induced_width"`
	Agents    []AgentInspection `json:"agents"`
}

// Inspect computes the MVA decomposition figures of p. The induced width
// of an agent is that of a min-fill order eliminating its interior
// variables with the boundary kept, which is what an eager MVA table by
// bucket elimination costs; the problem's width eliminates everything.
func Inspect(p *Problem) Inspection {
	st := p.Stats()
	d := Decompose(p)
	all := make([]int, len(p.Variables))
	for i := range all {
		all[i] = i
	}
	_, width := p.PrimalGraph().MinFill(all)
	rep := Inspection{
		Sense: p.Sense.String(), Variables: st.Variables, Functions: st.Functions,
		External: len(d.External), MaxArity: st.MaxArity, Width: width,
	}
	ext := make([]int, len(p.Agents))
	for _, fi := range d.External {
		seen := map[int]bool{}
		for _, v := range p.Functions[fi].Scope {
			a := p.Variables[v].Agent
			if !seen[a] {
				seen[a] = true
				ext[a]++
			}
		}
	}
	for i := range d.Subs {
		s := &d.Subs[i]
		lp := NewLocalProblem(p, s)
		interior := make([]int, lp.NumInterior())
		for k := range interior {
			interior[k] = lp.NB + k
		}
		_, w := lp.PrimalGraph().MinFill(interior)
		ar := AgentInspection{
			Agent: p.Agents[i].Name, Local: len(s.Local), Boundary: len(s.Boundary), Interior: len(s.Interior),
			LocalFns: len(s.Functions), External: ext[i], Width: w, Rows: -1,
		}
		for k, dsz := range lp.Domains {
			if k == 0 || dsz < ar.MinDomain {
				ar.MinDomain = dsz
			}
			ar.MaxDomain = max(ar.MaxDomain, dsz)
		}
		if rows, err := lp.Rows(); err == nil {
			ar.Rows = rows
		}
		rep.Agents = append(rep.Agents, ar)
	}
	return rep
}
