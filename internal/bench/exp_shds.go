package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/shds"
	"github.com/hearth-dcop/hearth/mva"
)

// shdsLevels is the number of energy levels a home commits to per slot.
// The MVA table of a home has levels^12 rows (one level per slot of the
// 12-hour horizon), and MGM's best response reads every row: 2 levels
// give 4096 rows per home, 3 give 531 441 and a minute per MGM run on 2
// cores, 4 (the importer's default) 16.7 million.
const shdsLevels = 2

// Metrics of the smart-home experiment.
var (
	SHDSCost = Metric{Name: "objective", Title: "J: bill + peak term (model units)", Lower: true,
		Get: func(r Row) float64 { return r.Objective }}
	SHDSPeak = Metric{Name: "peak_load", Title: "neighbourhood peak (kW)", Lower: true,
		Get: func(r Row) float64 { return r.PeakLoad }}
	SHDSPrice = Metric{Name: "price", Title: "energy bill ($)", Lower: true,
		Get: func(r Row) float64 { return r.Price }}
)

// SHDS is the smart-home data set experiment: the homes of an SHDS file
// scheduled without coordination (each home's own optimum), with
// SH-MGM-style best-response moves (MGM from that start, one mover per
// neighbourhood and round, as in the published simulator), and with
// hearth's distributed Gibbs sampling of the committed levels.
func SHDS() *Experiment {
	return &Experiment{
		Name:    "shds",
		Summary: "smart-home data set (SHDS): uncoordinated vs SH-MGM-style vs D-Gibbs; cost, peak, bill, runtime",
		Source:  "SHDS data set and SH-MGM (notes/shds-model.md §4–5)",
		Metrics: []Metric{SHDSCost, SHDSPeak, SHDSPrice, SimTime, Messages},
		Plan:    shdsPlan,
	}
}

func shdsPlan(quick bool) Plan {
	b := &shdsBuilder{compiled: map[*mva.Problem]*compile.Compiled{}}
	homes := []int{7, 21, 35, 71}
	rules := []int{2, 3, 4, 5, 6}
	plan := Plan{Seeds: 2, Timeout: 60 * time.Second}
	if quick {
		homes, rules = homes[:1], nil
		plan.Seeds, plan.Timeout = 1, 30*time.Second
	}
	// On the complete graphs of SHDS one home moves per MGM round, so
	// 2 × homes rounds let every home move twice (3 in the quick run).
	rounds := func(n int) func(*Algorithm) {
		return func(a *Algorithm) {
			if a.Variant == "SH-MGM-style" {
				a.Params["rounds"] = float64(2 * n)
				if quick {
					a.Params["rounds"] = 3
				}
			}
		}
	}
	file := func(n, k int) Point {
		f := fmt.Sprintf("dm_%d_1_%d", n, k)
		return Point{Label: f, Gen: map[string]string{"file": f}, Tune: rounds(n)}
	}
	hs := Sweep{Name: "homes", Title: "homes (dm files, 2 rules per home)", Build: b.build, Measure: b.measure,
		Algorithms: shdsAlgorithms(), Monotone: true}
	for _, n := range homes {
		pt := file(n, 2)
		pt.X = float64(n)
		hs.Points = append(hs.Points, pt)
	}
	plan.Sweeps = append(plan.Sweeps, hs)
	if len(rules) > 0 {
		rs := Sweep{Name: "rules", Title: "active rules per home (7 homes)", Build: b.build, Measure: b.measure,
			Algorithms: shdsAlgorithms()}
		for _, k := range rules {
			pt := file(7, k)
			pt.X = float64(k)
			rs.Points = append(rs.Points, pt)
		}
		plan.Sweeps = append(plan.Sweeps, rs)
	}
	return plan
}

// shdsAlgorithms: every home's table is filled eagerly by bucket
// elimination (4096 rows at once), which MGM reads whole anyway. MGM
// starts from every home's cheapest row (init = 2), the recommended SHDS
// start (notes/shds-model.md §5.1); with 0 rounds that start is the
// uncoordinated schedule; the points set the rounds of SH-MGM-style.
func shdsAlgorithms() []Algorithm {
	const group = "SHDS"
	alg := func(label, global string, params map[string]float64) Algorithm {
		return Algorithm{Group: group, Variant: label, Label: label, Global: global, Local: "be", Table: "eager", Params: params}
	}
	return []Algorithm{
		alg("Uncoordinated", "mgm", map[string]float64{"rounds": 0, "init": 2}),
		alg("SH-MGM-style", "mgm", map[string]float64{"init": 2}),
		// The costs are in the hundreds of thousands: at τ = 1 every
		// conditional is a point mass on the current value.
		alg("D-Gibbs", "dgibbs", map[string]float64{"iterations": 100, "init": 2, "temperature": 1e5}),
	}
}

// shdsBuilder imports and compiles SHDS files and keeps each compiled
// neighbourhood, so that a solution can be evaluated by the devices model
// itself (the true peak and bill, not the committed levels).
type shdsBuilder struct {
	mu       sync.Mutex
	compiled map[*mva.Problem]*compile.Compiled
}

func (b *shdsBuilder) build(_ uint64, pt Point, data string) (*mva.Problem, error) {
	path, err := findData(data, pt.Gen["file"]+".json")
	if err != nil {
		return nil, err
	}
	r, err := shds.ReadFile(path, shds.Options{Levels: shdsLevels})
	if err != nil {
		return nil, err
	}
	c, err := compile.Compile(r.Neighbourhood, compile.Options{})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.compiled[c.Problem] = c
	return c.Problem, nil
}

func (b *shdsBuilder) measure(p *mva.Problem, res mva.Result, row *Row) error {
	b.mu.Lock()
	c := b.compiled[p]
	b.mu.Unlock()
	if c == nil {
		return errors.New("no compiled neighbourhood for the problem")
	}
	assign, err := assignmentOf(p, res.Assignment)
	if err != nil {
		return err
	}
	s, ev, err := c.Report(assign)
	if err != nil {
		return err
	}
	if !ev.Feasible {
		return fmt.Errorf("the devices model rejects the schedule: %v", ev.Violations)
	}
	n := c.Model
	row.PeakLoad = ev.PeakLoad * n.Units.PowerScale
	row.Price = 0
	for _, pl := range n.Plans(s, ev) {
		row.Price += pl.Cost
	}
	return nil
}

// assignmentOf turns a result's labelled assignment back into value
// indices.
func assignmentOf(p *mva.Problem, labels map[string]string) ([]int, error) {
	assign := make([]int, len(p.Variables))
	for v, x := range p.Variables {
		l, ok := labels[x.Name]
		if !ok {
			return nil, fmt.Errorf("no value for variable %q", x.Name)
		}
		assign[v] = -1
		for i, d := range x.Domain {
			if d == l {
				assign[v] = i
				break
			}
		}
		if assign[v] < 0 {
			return nil, fmt.Errorf("variable %q: %q is not in its domain", x.Name, l)
		}
	}
	return assign, nil
}

// dataDirs are where findData looks for a data set file, relative to the
// working directory and up to three of its parents: the repository's data
// folder, then the two SHDS files the tests ship.
var dataDirs = []string{"data/shds", "devices/shds/testdata"}

// findData returns the path of a data set file: in dir when given,
// otherwise in the first of dataDirs that has it.
func findData(dir, name string) (string, error) {
	if dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	up := ""
	for range 4 {
		for _, d := range dataDirs {
			p := filepath.Join(up, d, name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
		up = filepath.Join(up, "..")
	}
	return "", fmt.Errorf("%s not found in %v (pass the SHDS data set's folder with --data)", name, dataDirs)
}
