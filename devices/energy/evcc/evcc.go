// Package evcc speaks the evcc optimizer's HTTP API (evcc-io/optimizer,
// openapi.yaml): a request describes one home's batteries and EVs, its
// household demand, PV forecast and two-way prices per time step; the
// response is a charge schedule. hearth answers it with its own planner
// (devices/energy), so a tool that calls the evcc optimizer at
// OPTIMIZER_URI can call `hearth serve` instead.
//
// Units are the API's: W, Wh per step, seconds, currency per Wh. The
// mapping to devices/energy and what hearth does differently is in
// README.md ("hearth plan and hearth serve").
package evcc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hearth-dcop/hearth/devices/energy"
)

// Request is the body of POST /optimize/charge-schedule.
type Request struct {
	Strategy   *Strategy  `json:"strategy,omitempty"`
	Grid       *Grid      `json:"grid,omitempty"`
	Batteries  []Battery  `json:"batteries"`
	TimeSeries TimeSeries `json:"time_series"`
	EtaC       *float64   `json:"eta_c,omitempty"`
	EtaD       *float64   `json:"eta_d,omitempty"`
	// M is the optimizer's big-M constant; hearth needs none and
	// ignores it.
	M *float64 `json:"M,omitempty"`
}

// Strategy holds the optimizer's cost-neutral tie-breaks. hearth
// accepts every documented value; its own tie-break (a tiny wear cost
// per kWh through storage) already charges before exporting and
// discharges before importing where that costs nothing.
type Strategy struct {
	ChargingStrategy    string `json:"charging_strategy,omitempty"`
	DischargingStrategy string `json:"discharging_strategy,omitempty"`
}

// Grid is the connection's limits (W) and the price per Wh beyond the
// import limit (absent: the limit is hard).
type Grid struct {
	PMaxImp    *float64 `json:"p_max_imp,omitempty"`
	PMaxExp    *float64 `json:"p_max_exp,omitempty"`
	PrcPExcImp *float64 `json:"prc_p_exc_imp,omitempty"`
}

// Battery is a home battery or an EV.
type Battery struct {
	ChargeFromGrid  bool      `json:"charge_from_grid"`
	DischargeToGrid bool      `json:"discharge_to_grid"`
	SCapacity       *float64  `json:"s_capacity,omitempty"`
	SMin            *float64  `json:"s_min"`
	SMax            *float64  `json:"s_max"`
	SInitial        *float64  `json:"s_initial"`
	CMin            *float64  `json:"c_min"`
	CMax            *float64  `json:"c_max"`
	DMax            *float64  `json:"d_max"`
	PA              *float64  `json:"p_a"`
	PDemand         []float64 `json:"p_demand,omitempty"`
	SGoal           []float64 `json:"s_goal,omitempty"`
	CPriority       *int      `json:"c_priority,omitempty"`
}

// TimeSeries are per step: dt in seconds, gt and ft in Wh, p_N and p_E
// in currency per Wh.
type TimeSeries struct {
	Dt []float64 `json:"dt"`
	Gt []float64 `json:"gt"`
	Ft []float64 `json:"ft"`
	PN []float64 `json:"p_N"`
	PE []float64 `json:"p_E"`
}

// Response is the optimizer's result.
type Response struct {
	Status         string            `json:"status"`
	ObjectiveValue *float64          `json:"objective_value"`
	LimitViolation *LimitViolations  `json:"limit_violations,omitempty"`
	Batteries      []BatteryResult   `json:"batteries"`
	GridImport     []float64         `json:"grid_import"`
	GridExport     []float64         `json:"grid_export"`
	FlowDirection  []int             `json:"flow_direction"`
	ImportOver     []float64         `json:"grid_import_overshoot"`
	ExportOver     []float64         `json:"grid_export_overshoot"`
	MissedGoals    []MissedGoal      `json:"missed_goals,omitempty"`
	Extra          map[string]string `json:"hearth,omitempty"`
}

// LimitViolations flags the limits the plan could not keep.
type LimitViolations struct {
	GridImportLimitExceeded bool `json:"grid_import_limit_exceeded"`
	GridExportLimitHit      bool `json:"grid_export_limit_hit"`
}

// BatteryResult is one battery's schedule: energies per step in Wh.
type BatteryResult struct {
	ChargingPower    []float64 `json:"charging_power"`
	DischargingPower []float64 `json:"discharging_power"`
	StateOfCharge    []float64 `json:"state_of_charge"`
}

// MissedGoal is hearth's addition: a soft goal the plan misses (s_goal
// of battery Battery at step Step) and by how many Wh.
type MissedGoal struct {
	Battery int     `json:"battery"`
	Step    int     `json:"step"`
	ShortWh float64 `json:"short_wh"`
}

// ErrorBody is the body of a 400 or 500 answer.
type ErrorBody struct {
	Message string            `json:"message"`
	Details map[string]string `json:"details,omitempty"`
}

// FieldError is a bad request, naming the field ("batteries.0.s_max").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Body returns the 400 body for err: its field in details when it is a
// FieldError.
func Body(err error) ErrorBody {
	var fe *FieldError
	if errors.As(err, &fe) {
		return ErrorBody{Message: "Input payload validation failed: " + fe.Error(), Details: map[string]string{fe.Field: fe.Msg}}
	}
	return ErrorBody{Message: err.Error()}
}

// MaxBody bounds a request body (bytes): 96 steps of every series take a
// few kilobytes; 8 MiB is far beyond any real request.
const MaxBody = 8 << 20

// MaxSteps bounds the time series (a year of quarter hours).
const MaxSteps = 35040

// Decode reads and validates a request. Every fault is a *FieldError.
func Decode(r io.Reader) (*Request, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBody+1))
	if err != nil {
		return nil, &FieldError{Field: "body", Msg: err.Error()}
	}
	if len(data) > MaxBody {
		return nil, &FieldError{Field: "body", Msg: fmt.Sprintf("longer than %d bytes", MaxBody)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, &FieldError{Field: "body", Msg: "more than one JSON document"}
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	if err := req.Home().Validate(); err != nil {
		// Figures each valid alone that overflow once converted (1e308
		// Wh in a one-second step).
		return nil, &FieldError{Field: "body", Msg: err.Error()}
	}
	return &req, nil
}

// jsonError names the field a decoding error is about.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := te.Field
		if f == "" {
			f = "body"
		}
		return &FieldError{Field: f, Msg: fmt.Sprintf("want %s, got a JSON %s", te.Type, te.Value)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &FieldError{Field: "body", Msg: fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, err)}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name := strings.Trim(f, `"`)
		if name == "" {
			return &FieldError{Field: "body", Msg: "a field with an empty name"}
		}
		return &FieldError{Field: name, Msg: "unknown field"}
	}
	if errors.Is(err, io.EOF) {
		return &FieldError{Field: "body", Msg: "empty"}
	}
	return &FieldError{Field: "body", Msg: msg}
}

var (
	chargingStrategies    = []string{"", "none", "charge_before_export", "attenuate_demand_peaks", "attenuate_feedin_peaks", "attenuate_grid_peaks"}
	dischargingStrategies = []string{"", "none", "discharge_before_import"}
)

func (req *Request) validate() error {
	ts := &req.TimeSeries
	n := len(ts.Dt)
	if n == 0 {
		return &FieldError{Field: "time_series.dt", Msg: "required, at least one step"}
	}
	if n > MaxSteps {
		return &FieldError{Field: "time_series.dt", Msg: fmt.Sprintf("%d steps, more than %d", n, MaxSteps)}
	}
	for _, s := range []struct {
		name string
		v    []float64
		pos  bool
	}{{"dt", ts.Dt, true}, {"gt", ts.Gt, false}, {"ft", ts.Ft, false}, {"p_N", ts.PN, false}, {"p_E", ts.PE, false}} {
		if len(s.v) != n {
			return &FieldError{Field: "time_series." + s.name, Msg: fmt.Sprintf("%d values, dt has %d: all time series must have the same length", len(s.v), n)}
		}
		for i, x := range s.v {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || s.pos && x == 0 {
				return &FieldError{Field: fmt.Sprintf("time_series.%s.%d", s.name, i), Msg: fmt.Sprintf("%g is not allowed (non-negative numbers; dt positive)", x)}
			}
		}
	}
	for i := range n {
		if ts.PE[i] > ts.PN[i] {
			return &FieldError{Field: fmt.Sprintf("time_series.p_E.%d", i), Msg: fmt.Sprintf("export price %g above import price %g: hearth's meter needs p_E ≤ p_N", ts.PE[i], ts.PN[i])}
		}
	}
	for _, e := range []struct {
		name string
		v    *float64
	}{{"eta_c", req.EtaC}, {"eta_d", req.EtaD}} {
		if e.v != nil && (math.IsNaN(*e.v) || *e.v <= 0 || *e.v > 1) {
			return &FieldError{Field: e.name, Msg: fmt.Sprintf("%g: want an efficiency in (0, 1]", *e.v)}
		}
	}
	if s := req.Strategy; s != nil {
		if !contains(chargingStrategies, s.ChargingStrategy) {
			return &FieldError{Field: "strategy.charging_strategy", Msg: fmt.Sprintf("%q is not one of %s", s.ChargingStrategy, strings.Join(chargingStrategies[1:], ", "))}
		}
		if !contains(dischargingStrategies, s.DischargingStrategy) {
			return &FieldError{Field: "strategy.discharging_strategy", Msg: fmt.Sprintf("%q is not one of %s", s.DischargingStrategy, strings.Join(dischargingStrategies[1:], ", "))}
		}
	}
	if g := req.Grid; g != nil {
		for _, f := range []struct {
			name string
			v    *float64
		}{{"p_max_imp", g.PMaxImp}, {"p_max_exp", g.PMaxExp}, {"prc_p_exc_imp", g.PrcPExcImp}} {
			if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0) || *f.v < 0) {
				return &FieldError{Field: "grid." + f.name, Msg: fmt.Sprintf("%g: want a non-negative number", *f.v)}
			}
		}
	}
	if len(req.Batteries) == 0 {
		return &FieldError{Field: "batteries", Msg: "required, at least one battery"}
	}
	for i := range req.Batteries {
		if err := req.Batteries[i].validate(i, n); err != nil {
			return err
		}
	}
	return nil
}

func (b *Battery) validate(i, n int) error {
	f := func(name string) string { return fmt.Sprintf("batteries.%d.%s", i, name) }
	for _, r := range []struct {
		name string
		v    *float64
	}{{"s_min", b.SMin}, {"s_max", b.SMax}, {"s_initial", b.SInitial}, {"c_min", b.CMin}, {"c_max", b.CMax}, {"d_max", b.DMax}, {"p_a", b.PA}} {
		if r.v == nil {
			return &FieldError{Field: f(r.name), Msg: "'" + r.name + "' is a required property"}
		}
		if math.IsNaN(*r.v) || math.IsInf(*r.v, 0) || *r.v < 0 {
			return &FieldError{Field: f(r.name), Msg: fmt.Sprintf("%g: want a non-negative number", *r.v)}
		}
	}
	if b.SCapacity != nil && (math.IsNaN(*b.SCapacity) || math.IsInf(*b.SCapacity, 0) || *b.SCapacity < 0) {
		return &FieldError{Field: f("s_capacity"), Msg: "want a non-negative number"}
	}
	switch {
	case *b.SMax < *b.SMin:
		return &FieldError{Field: f("s_max"), Msg: fmt.Sprintf("%g below s_min %g", *b.SMax, *b.SMin)}
	case b.SCapacity != nil && *b.SCapacity > 0 && *b.SInitial > *b.SCapacity:
		return &FieldError{Field: f("s_initial"), Msg: fmt.Sprintf("%g above s_capacity %g", *b.SInitial, *b.SCapacity)}
	case *b.CMin > *b.CMax && *b.CMax > 0:
		return &FieldError{Field: f("c_min"), Msg: fmt.Sprintf("%g above c_max %g", *b.CMin, *b.CMax)}
	}
	if b.SGoal != nil && len(b.SGoal) != n {
		return &FieldError{Field: f("s_goal"), Msg: fmt.Sprintf("%d values for %d steps", len(b.SGoal), n)}
	}
	for t, g := range b.SGoal {
		if math.IsNaN(g) || math.IsInf(g, 0) || g < 0 {
			return &FieldError{Field: fmt.Sprintf("batteries.%d.s_goal.%d", i, t), Msg: "want a non-negative number"}
		}
	}
	for t, d := range b.PDemand {
		if d != 0 {
			return &FieldError{Field: fmt.Sprintf("batteries.%d.p_demand.%d", i, t), Msg: "hearth does not support minimum charge demands per step; express them as s_goal"}
		}
	}
	if b.CPriority != nil && (*b.CPriority < 0 || *b.CPriority > 2) {
		return &FieldError{Field: f("c_priority"), Msg: "want 0, 1 or 2"}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Home converts a validated request into an energy home: W to kW, Wh per
// step to kW, prices per Wh to per kWh. The demand gt is the background
// load; ft is curtailable PV (the optimizer curtails when the export limit
// binds). s_goal entries above 0 are soft goals at the end of their step.
// Without prc_p_exc_imp the grid limits are hard, as in the optimizer.
func (req *Request) Home() *energy.Home {
	ts := &req.TimeSeries
	n := len(ts.Dt)
	h := &energy.Home{Name: "evcc", Wear: -1, Dt: make([]float64, n), Load: make([]float64, n)}
	h.Tariff.Import, h.Tariff.Export = make([]float64, n), make([]float64, n)
	pv := energy.PV{Name: "ft", Curtailable: true, Forecast: make([]float64, n)}
	for t := range n {
		hours := ts.Dt[t] / 3600
		h.Dt[t] = hours
		h.Load[t] = ts.Gt[t] / 1000 / hours
		pv.Forecast[t] = ts.Ft[t] / 1000 / hours
		h.Tariff.Import[t] = ts.PN[t] * 1000
		h.Tariff.Export[t] = ts.PE[t] * 1000
	}
	h.PV = []energy.PV{pv}
	h.Grid.HardLimits = true
	if g := req.Grid; g != nil {
		if g.PMaxImp != nil {
			h.Grid.ImportLimit = *g.PMaxImp / 1000
		}
		if g.PMaxExp != nil {
			h.Grid.ExportLimit = *g.PMaxExp / 1000
		}
		if g.PrcPExcImp != nil {
			h.Grid.HardLimits = false
			h.Grid.LimitPenalty = math.Max(*g.PrcPExcImp*1000, 1e-6)
		}
	}
	etaC, etaD := 0.95, 0.95
	if req.EtaC != nil {
		etaC = *req.EtaC
	}
	if req.EtaD != nil {
		etaD = *req.EtaD
	}
	for i, b := range req.Batteries {
		s := energy.Storage{
			Name: fmt.Sprintf("battery%d", i), Min: *b.SMin / 1000, Max: *b.SMax / 1000, Initial: *b.SInitial / 1000,
			MinCharge: *b.CMin / 1000, MaxCharge: *b.CMax / 1000, MaxDischarge: *b.DMax / 1000,
			EtaC: etaC, EtaD: etaD, EndValue: *b.PA * 1000,
			NoGridCharge: !b.ChargeFromGrid, NoGridDischarge: !b.DischargeToGrid,
		}
		if b.SCapacity != nil {
			s.Capacity = *b.SCapacity / 1000
		}
		for t, g := range b.SGoal {
			if g > 0 {
				s.Goals = append(s.Goals, energy.Goal{Index: t + 1, Energy: g / 1000, Text: fmt.Sprintf("s_goal[%d]", t)})
			}
		}
		h.Storage = append(h.Storage, s)
	}
	return h
}

// Respond turns a plan of h (from Home) into the optimizer's response.
func Respond(h *energy.Home, p *energy.Plan) *Response {
	n := len(h.Dt)
	wh := func(kw float64, t int) float64 { return kw * h.Dt[t] * 1000 }
	obj := -p.Objective
	r := &Response{Status: "Optimal", ObjectiveValue: &obj, LimitViolation: &LimitViolations{},
		GridImport: make([]float64, n), GridExport: make([]float64, n), FlowDirection: make([]int, n),
		ImportOver: make([]float64, n), ExportOver: make([]float64, n),
		Extra: map[string]string{"planner": "hearth", "cost_with_penalties": fmt.Sprintf("%.6f", p.Cost())}}
	for t := range n {
		r.GridImport[t] = wh(p.Import[t], t)
		r.GridExport[t] = wh(p.Export[t], t)
		if p.Export[t] > 0 {
			r.FlowDirection[t] = 1
		}
		if l := h.Grid.ImportLimit; l > 0 && p.Import[t] > l+1e-9 {
			r.ImportOver[t] = wh(p.Import[t]-l, t)
			r.LimitViolation.GridImportLimitExceeded = true
		}
		if l := h.Grid.ExportLimit; l > 0 {
			curtailed := 0.0
			for i, a := range h.PV {
				curtailed += a.Forecast[t] - p.PVUsed[i][t]
			}
			if curtailed > 1e-9 && p.Export[t] >= l-1e-6 {
				r.ExportOver[t] = wh(curtailed, t)
				r.LimitViolation.GridExportLimitHit = true
			}
		}
	}
	for s := range h.Storage {
		b := BatteryResult{ChargingPower: make([]float64, n), DischargingPower: make([]float64, n), StateOfCharge: make([]float64, n)}
		for t := range n {
			b.ChargingPower[t] = wh(p.Charge[s][t], t)
			b.DischargingPower[t] = wh(p.Discharge[s][t], t)
			b.StateOfCharge[t] = p.Energy[s][t+1] * 1000
		}
		r.Batteries = append(r.Batteries, b)
	}
	for _, m := range p.Missed {
		if m.Storage == "" {
			continue
		}
		var i int
		fmt.Sscanf(m.Storage, "battery%d", &i)
		r.MissedGoals = append(r.MissedGoals, MissedGoal{Battery: i, Step: m.Slot - 1, ShortWh: m.By * 1000})
	}
	return r
}
