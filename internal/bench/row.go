package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Statuses of a run.
const (
	// StatusOK: the run finished with a feasible solution.
	StatusOK = "ok"
	// StatusInfeasible: the run finished without a feasible solution
	// (a proof for exact algorithms, a failure to find one for others).
	StatusInfeasible = "infeasible"
	// StatusTimeout: the run passed its time limit.
	StatusTimeout = "timeout"
	// StatusMemory: a reformulation or table exceeded its size limit.
	StatusMemory = "memory"
	// StatusUnavailable: the algorithm cannot run in this build (a GPU
	// row without CUDA).
	StatusUnavailable = "unavailable"
	// StatusSkipped: not run because the algorithm failed on every seed
	// of an easier point of a monotone sweep.
	StatusSkipped = "skipped"
	// StatusError: anything else; always a bug to look at.
	StatusError = "error"
)

// Row is one run: its key, its outcome and its metrics. Numbers that do
// not apply (the objective of a time-out) are NaN and empty in the CSV.
type Row struct {
	Experiment string
	Sweep      string
	X          float64
	XLabel     string
	Seed       uint64
	Algorithm  string
	Group      string
	Variant    string
	Global     string
	Local      string
	Table      string
	Reform     string
	Device     string
	Runs       int
	Trials     int
	Status     string
	Agents     int
	Variables  int
	Sense      string
	Objective  float64
	Optimal    bool
	// Reference is the best objective any exact algorithm proved on the
	// instance or, without one, the best any algorithm found; GapPct is
	// this row's error against it, in percent.
	Reference float64
	GapPct    float64
	SimTimeMs float64
	WallMs    float64
	NCCC      int64
	Messages  int64
	Internal  int64
	MaxBytes  int64
	Bytes     int64
	// PeakLoad and Price are the smart-home figures of a schedule (the
	// neighbourhood's greatest draw, in kW, and its energy bill), NaN for
	// other problems.
	PeakLoad float64
	Price    float64
	Host     string
	Error    string
}

// Key identifies the instance a row ran on: rows with the same key ran on
// the same problem.
func (r Row) Key() string {
	return r.Experiment + "\x00" + r.Sweep + "\x00" + r.XLabel + "\x00" + strconv.FormatUint(r.Seed, 10)
}

// cost is the row's objective as a cost to minimise.
func (r Row) cost() float64 {
	if r.Sense == "max" {
		return -r.Objective
	}
	return r.Objective
}

// Header is the CSV header, in column order.
var Header = []string{
	"experiment", "sweep", "x", "x_label", "seed", "algorithm", "group", "variant",
	"global", "local", "table", "reform", "device", "runs", "trials", "status",
	"agents", "variables", "sense", "objective", "optimal", "reference", "gap_pct",
	"sim_time_ms", "wall_ms", "nccc", "messages", "internal_messages",
	"max_message_bytes", "total_message_bytes", "peak_load", "price", "host", "error",
}

func fmtFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func (r Row) record() []string {
	return []string{
		r.Experiment, r.Sweep, fmtFloat(r.X), r.XLabel, strconv.FormatUint(r.Seed, 10),
		r.Algorithm, r.Group, r.Variant, r.Global, r.Local, r.Table, r.Reform, r.Device,
		strconv.Itoa(r.Runs), strconv.Itoa(r.Trials), r.Status,
		strconv.Itoa(r.Agents), strconv.Itoa(r.Variables), r.Sense,
		fmtFloat(r.Objective), strconv.FormatBool(r.Optimal), fmtFloat(r.Reference), fmtFloat(r.GapPct),
		fmtFloat(r.SimTimeMs), fmtFloat(r.WallMs), strconv.FormatInt(r.NCCC, 10),
		strconv.FormatInt(r.Messages, 10), strconv.FormatInt(r.Internal, 10),
		strconv.FormatInt(r.MaxBytes, 10), strconv.FormatInt(r.Bytes, 10),
		fmtFloat(r.PeakLoad), fmtFloat(r.Price), r.Host, r.Error,
	}
}

// WriteCSV writes the header and rows.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write(r.record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads rows written by WriteCSV, naming the line of any malformed
// field. Columns are found by name, so files with their columns in
// another order, or with extra columns, are read as well.
func ReadCSV(rd io.Reader) ([]Row, error) {
	cr := csv.NewReader(rd)
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the CSV header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, h := range Header {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("CSV header: missing column %q", h)
		}
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		p := fieldParser{rec: rec, col: col, line: line}
		r := Row{
			Experiment: p.str("experiment"), Sweep: p.str("sweep"), X: p.float("x"),
			XLabel: p.str("x_label"), Seed: uint64(p.int("seed")), Algorithm: p.str("algorithm"),
			Group: p.str("group"), Variant: p.str("variant"), Global: p.str("global"),
			Local: p.str("local"), Table: p.str("table"), Reform: p.str("reform"),
			Device: p.str("device"), Runs: int(p.int("runs")), Trials: int(p.int("trials")),
			Status: p.str("status"), Agents: int(p.int("agents")), Variables: int(p.int("variables")),
			Sense: p.str("sense"), Objective: p.float("objective"), Optimal: p.bool("optimal"),
			Reference: p.float("reference"), GapPct: p.float("gap_pct"),
			SimTimeMs: p.float("sim_time_ms"), WallMs: p.float("wall_ms"), NCCC: p.int("nccc"),
			Messages: p.int("messages"), Internal: p.int("internal_messages"),
			MaxBytes: p.int("max_message_bytes"), Bytes: p.int("total_message_bytes"),
			PeakLoad: p.float("peak_load"), Price: p.float("price"),
			Host: p.str("host"), Error: p.str("error"),
		}
		if p.err != nil {
			return nil, p.err
		}
		rows = append(rows, r)
	}
}

// fieldParser reads typed fields of one record, keeping the first error.
type fieldParser struct {
	rec  []string
	col  map[string]int
	line int
	err  error
}

func (p *fieldParser) str(name string) string {
	i := p.col[name]
	if i >= len(p.rec) {
		return ""
	}
	return p.rec[i]
}

func (p *fieldParser) fail(name, s, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("CSV line %d: column %s: %q is not %s", p.line, name, s, want)
	}
}

func (p *fieldParser) float(name string) float64 {
	s := p.str(name)
	if s == "" {
		return math.NaN()
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		p.fail(name, s, "a number")
		return math.NaN()
	}
	return x
}

func (p *fieldParser) int(name string) int64 {
	s := p.str(name)
	if s == "" {
		return 0
	}
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		p.fail(name, s, "a whole number")
	}
	return x
}

func (p *fieldParser) bool(name string) bool {
	s := p.str(name)
	if s == "" {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		p.fail(name, s, "true or false")
	}
	return b
}
