package energyround

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/mqtt/sign"
)

// streetFile is cmd/hearth's street of three energy homes.
var streetFile = filepath.Join("..", "..", "cmd", "hearth", "testdata", "energy-run", "street.toml")

// members loads streetFile's energy homes, planned alone (fir and
// hazel only under the race detector).
func members(t *testing.T) ([]*street.Member, street.Peak) {
	t.Helper()
	cfg, err := config.Load(streetFile)
	if err != nil {
		t.Fatal(err)
	}
	_, ms, err := street.Split(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		ms = ms[:2]
	}
	if err := street.PlanAlone(context.Background(), ms, street.Options{}); err != nil {
		t.Fatal(err)
	}
	return ms, street.PeakOf(cfg.Neighbourhood)
}

// bus delivers every publication to every exchange, as a broker would
// to subscribers (not retained).
type bus struct {
	mu sync.Mutex
	xs []*Exchange
}

func (b *bus) publish(_ context.Context, t string, p []byte) error {
	b.mu.Lock()
	xs := b.xs
	b.mu.Unlock()
	for _, x := range xs {
		x.Receive(t, false, p)
	}
	return nil
}

func keyring(t *testing.T, names ...string) *sign.Keyring {
	t.Helper()
	k := sign.NewKeyring()
	for _, n := range names {
		s, err := sign.Generate(n, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.AddSigner(s); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// TestRunMatchesCoordinate: the three homes, each running Run with its
// own exchange and keys over an in-memory bus, end with the plans that
// street.Coordinate finds in process for the same street, to 1e-9 kW,
// in the same number of sweeps and moves; every plan passes the
// checker, and the street objective each home reports is Coordinate's.
func TestRunMatchesCoordinate(t *testing.T) {
	want, pk := members(t)
	cr, err := street.Coordinate(context.Background(), want, nil, pk, street.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Moves == 0 {
		t.Fatal("the test street does not move when coordinated")
	}
	got, _ := members(t)
	var names []string
	for _, m := range got {
		names = append(names, m.Home.Name)
	}
	keys := keyring(t, names...)
	b := &bus{}
	for range got {
		b.xs = append(b.xs, NewExchange("hearth", keys, nil))
	}
	slot0 := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	res := make([]Result, len(got))
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for i, m := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = Run(context.Background(), b.xs[i], m, Config{Prefix: "hearth", Round: "r1", Home: m.Home.Name, Homes: names,
				Slot0: slot0, Peak: pk, Deadline: time.Now().Add(30 * time.Second), Keys: keys, Publish: b.publish, Heartbeat: 50 * time.Millisecond})
		}()
	}
	wg.Wait()
	for i, m := range got {
		if errs[i] != nil {
			t.Fatalf("%s: %v", m.Home.Name, errs[i])
		}
		if res[i].Sweeps != cr.Rounds || res[i].Moves != cr.Moves || len(res[i].Missing) != 0 || res[i].Dropped != 0 {
			t.Errorf("%s: %+v; Coordinate: %d rounds, %d moves", m.Home.Name, res[i], cr.Rounds, cr.Moves)
		}
		if math.Abs(res[i].Objective-cr.Final) > 1e-9*math.Max(1, cr.Final) {
			t.Errorf("%s: objective %.12g, Coordinate %.12g", m.Home.Name, res[i].Objective, cr.Final)
		}
		for k := range m.Plan.Import {
			if d := m.Plan.Import[k] - want[i].Plan.Import[k]; math.Abs(d) > 1e-9 {
				t.Errorf("%s slot %d: import %g, Coordinate %g", m.Home.Name, k, m.Plan.Import[k], want[i].Plan.Import[k])
			}
		}
		if err := plancheck.Check(m.Home, m.Plan).Err(); err != nil {
			t.Errorf("%s: %v", m.Home.Name, err)
		}
	}
}

// TestRunDeadline: a home whose neighbour never answers ends its round
// at the deadline, naming the neighbour, with its alone plan.
func TestRunDeadline(t *testing.T) {
	ms, pk := members(t)
	me := ms[0]
	alone := me.Plan
	x := NewExchange("hearth", nil, nil)
	start := time.Now()
	res, err := Run(context.Background(), x, me, Config{Prefix: "hearth", Round: "r1", Home: me.Home.Name, Homes: []string{me.Home.Name, "ghost"},
		Slot0: time.Now(), Peak: pk, Deadline: start.Add(300 * time.Millisecond), Heartbeat: 50 * time.Millisecond,
		Publish: func(context.Context, string, []byte) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the round took %v past a 300 ms deadline", took)
	}
	if len(res.Missing) != 1 || res.Missing[0] != "ghost" || me.Plan != alone {
		t.Errorf("result %+v; plan changed: %v", res, me.Plan != alone)
	}
	// A cancelled context ends the round too, with its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, x, me, Config{Prefix: "hearth", Round: "r2", Home: me.Home.Name, Homes: []string{me.Home.Name, "ghost"},
		Slot0: time.Now(), Peak: pk, Deadline: time.Now().Add(time.Hour), Publish: func(context.Context, string, []byte) error { return nil }}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled round: err = %v", err)
	}
}

// TestDecode: what a home accepts of a load message, and the error that
// names what is wrong with the others.
func TestDecode(t *testing.T) {
	keys := keyring(t, "fir", "hazel")
	fir, hazel := keys.Signer("fir"), keys.Signer("hazel")
	slot0 := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	tp := Topic("hearth", "hazel", "r1")
	good := Load{Round: "r1", Home: "hazel", Sweep: 2, Slot0: slot0.Format(time.RFC3339), ImportKW: []float64{1, 0, 2.5}, Cost: 1.25, Moved: true}
	enc := func(l Load) []byte {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	with := func(f func(*Load)) []byte {
		l := good
		l.ImportKW = append([]float64(nil), good.ImportKW...)
		f(&l)
		return hazel.Seal(tp, enc(l))
	}
	tampered := hazel.Seal(tp, enc(good))
	tampered[strings.Index(string(tampered), "2.5")] = '9'
	want := Expect{Slots: 3, Slot0: slot0}
	tests := []struct {
		name     string
		topic    string
		retained bool
		payload  []byte
		err      string // "" for accepted
	}{
		{"signed by its home", tp, false, hazel.Seal(tp, enc(good)), ""},
		{"retained", tp, true, hazel.Seal(tp, enc(good)), "retained"},
		{"unsigned", tp, false, enc(good), "unsigned"},
		{"signed by another home", tp, false, fir.Seal(tp, enc(good)), `signer may not publish on this topic: "fir"`},
		{"tampered", tp, false, tampered, "bad signature"},
		{"moved to another round", Topic("hearth", "hazel", "r2"), false, hazel.Seal(tp, enc(good)), "bad signature"},
		{"other round inside", tp, false, with(func(l *Load) { l.Round = "r0" }), `round "r0", but the topic's is "r1"`},
		{"other home inside", tp, false, with(func(l *Load) { l.Home = "fir" }), `home "fir", but the topic's is "hazel"`},
		{"negative sweep", tp, false, with(func(l *Load) { l.Sweep = -1 }), "sweep -1 outside"},
		{"huge sweep", tp, false, with(func(l *Load) { l.Sweep = MaxSweeps + 1 }), "sweep 1001 outside"},
		{"slots", tp, false, with(func(l *Load) { l.ImportKW = l.ImportKW[:2] }), "import_kw has 2 slots, the round 3"},
		{"negative import", tp, false, with(func(l *Load) { l.ImportKW[1] = -0.5 }), "import_kw[1] = -0.5 outside"},
		{"huge import", tp, false, with(func(l *Load) { l.ImportKW[0] = 1e9 }), "import_kw[0] = 1e+09 outside"},
		{"other horizon", tp, false, with(func(l *Load) { l.Slot0 = slot0.Add(time.Hour).Format(time.RFC3339) }), "slot0 2026-11-26T18:00:00Z, but this home's round starts at"},
		{"bad slot0", tp, false, with(func(l *Load) { l.Slot0 = "soon" }), `slot0 "soon"`},
		{"unknown field", tp, false, hazel.Seal(tp, []byte(`{"round":"r1","home":"hazel","sweep":0,"slot0":"2026-11-26T17:00:00Z","import_kw":[0,0,0],"cost":0,"moved":false,"extra":1}`)), `unknown field "extra"`},
		{"not JSON", tp, false, hazel.Seal(tp, []byte("import 3 kW")), "invalid character"},
		{"infeasible, not final", tp, false, with(func(l *Load) { l.Infeasible = "window 1: over" }), "infeasible in a load that is not final"},
		{"infeasible, too long", tp, false, with(func(l *Load) { l.Final, l.Infeasible = true, strings.Repeat("x", maxReason+1) }), "not a reason of at most"},
		{"infeasible, control characters", tp, false, with(func(l *Load) { l.Final, l.Infeasible = true, "window 1\x1b[2J" }), "not a reason of at most"},
		{"not a load topic", "hearth/home/hazel/plan/battery", false, hazel.Seal(tp, enc(good)), "not a load topic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Decode("hearth", tc.topic, tc.retained, tc.payload, keys, want)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if l.Sweep != good.Sweep || l.Cost != good.Cost || !l.Moved || len(l.ImportKW) != 3 || l.ImportKW[2] != 2.5 {
					t.Errorf("decoded %+v, want %+v", l, good)
				}
				return
			}
			if !errors.Is(err, ErrDropped) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.topic) {
				t.Errorf("err = %v, want ErrDropped naming %s and %q", err, tc.topic, tc.err)
			}
		})
	}
	// Without keys (`hearth run --insecure`) a signed payload's content
	// is read as it is.
	if _, err := Decode("hearth", tp, false, hazel.Seal(tp, enc(good)), nil, want); err != nil {
		t.Errorf("unsigned street, signed payload: %v", err)
	}
}

// TestExchangeKeepsNewest: an older sweep (a replay, a late copy) does
// not replace a newer one, and another round's loads are not taken.
func TestExchangeKeepsNewest(t *testing.T) {
	x := NewExchange("hearth", nil, nil)
	x.begin("r1", []string{"fir", "hazel"}, Expect{Slots: 1})
	tp := Topic("hearth", "hazel", "r1")
	send := func(round string, sweep int, kw float64) {
		b, _ := json.Marshal(Load{Round: round, Home: "hazel", Sweep: sweep, ImportKW: []float64{kw}})
		if err := x.Receive(Topic("hearth", "hazel", round), false, b); err != nil {
			t.Fatal(err)
		}
	}
	send("r1", 2, 2)
	send("r1", 1, 1)
	send("r0", 3, 3)
	if l, ok := x.get("hazel", 0); !ok || l.Sweep != 2 || l.ImportKW[0] != 2 {
		t.Errorf("hazel's latest %+v, want sweep 2 (%s)", l, tp)
	}
}

// FuzzDecode: any topic and payload give a load that keeps Decode's
// promises or an error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add("hearth/home/hazel/round/r1/load", []byte(`{"round":"r1","home":"hazel","sweep":1,"slot0":"","import_kw":[1,2],"cost":3,"moved":true}`), false)
	f.Add("hearth/home/hazel/round/r1/load", []byte(`{"round":"r1","home":"hazel","sweep":1,"import_kw":[1e400]}`), false)
	f.Add("hearth/home//round/r1/load", []byte(`{}`), true)
	f.Fuzz(func(t *testing.T, tp string, payload []byte, retained bool) {
		l, err := Decode("hearth", tp, retained, payload, nil, Expect{Slots: 2})
		if err != nil {
			if !errors.Is(err, ErrDropped) {
				t.Fatalf("error %v does not wrap ErrDropped", err)
			}
			return
		}
		home, round, ok := ParseTopic("hearth", tp)
		if !ok || retained || l.Home != home || l.Round != round || len(l.ImportKW) != 2 || l.Sweep < 0 || l.Sweep > MaxSweeps || math.IsNaN(l.Cost) || math.IsInf(l.Cost, 0) {
			t.Fatalf("accepted %+v on %s (retained %v)", l, tp, retained)
		}
		for _, v := range l.ImportKW {
			if !(v >= 0 && v <= maxKW) {
				t.Fatalf("accepted import %v", v)
			}
		}
	})
}

// TestRunStreetMatchesCoordinateStreet: with Config.Street — a compiled
// home's load and committed caps, a binding feeder limit soft or hard,
// links that leave pairs out, a hard limit kept only after a breakout
// phase — the homes running Run over the bus end
// with street.CoordinateStreet's plans of the same street (1e-9 kW),
// sweeps, moves and objective; each case's plans differ from those of
// the street without its limit or links, so a Run that ignored them
// would fail.
func TestRunStreetMatchesCoordinateStreet(t *testing.T) {
	cfg, err := config.Load(streetFile)
	if err != nil {
		t.Fatal(err)
	}
	ws := cfg.Neighbourhood.Windows
	ms, pk := members(t)
	T := len(ms[0].Home.Dt)
	compiled := make([]float64, T)
	for k := range compiled {
		compiled[k] = 1
	}
	committed := make([]float64, len(ws))
	for w := range committed {
		committed[w] = 1.5
	}
	plain := func() *street.Street {
		return &street.Street{Peak: pk, Compiled: [][]float64{compiled}}
	}
	links := [][2]int{{0, 1}}
	for i := 2; i <= len(ms); i++ {
		links = append(links, [2]int{i - 1, i})
	}
	cases := []struct {
		name string
		mod  func(s *street.Street)
		// slow: skipped under the race detector (seconds of best
		// responses; the breakout's sweeps add no concurrency).
		slow bool
	}{
		{"soft feeder", func(s *street.Street) {
			s.Feeder = street.Feeder{Limit: 6, Windows: ws, Committed: committed}
		}, false},
		{"hard feeder", func(s *street.Street) {
			s.Feeder = street.Feeder{Limit: 9, Hard: true, Windows: ws, Committed: committed}
		}, false},
		{"links", func(s *street.Street) { s.Links = links }, false},
		// The street alone under a hard 4 kW limit: the sweeps end
		// above it and a breakout phase keeps it (devices/street's
		// TestHardFeederEnergyRun, CBC's MILP the truth).
		{"hard feeder, breakout", func(s *street.Street) {
			s.Compiled = nil
			s.Feeder = street.Feeder{Limit: 4, Hard: true, Windows: ws}
		}, true},
	}
	base, _ := members(t)
	if _, err := street.CoordinateStreet(context.Background(), base, plain(), street.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && raceEnabled {
				t.Skip("seconds of best responses under the race detector")
			}
			st := plain()
			tc.mod(st)
			want, _ := members(t)
			cr, err := street.CoordinateStreet(context.Background(), want, st, street.Options{})
			if err != nil {
				t.Fatal(err)
			}
			same := true
			for i := range want {
				same = same && slices.Equal(want[i].Plan.Import, base[i].Plan.Import)
			}
			if same {
				t.Fatalf("the %s moves no plan: the test would show nothing", tc.name)
			}
			got, _ := members(t)
			var names []string
			for _, m := range got {
				names = append(names, m.Home.Name)
			}
			b := &bus{}
			for range got {
				b.xs = append(b.xs, NewExchange("hearth", nil, nil))
			}
			res := make([]Result, len(got))
			errs := make([]error, len(got))
			var wg sync.WaitGroup
			for i, m := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res[i], errs[i] = Run(context.Background(), b.xs[i], m, Config{Prefix: "hearth", Round: "s1", Home: m.Home.Name, Homes: names,
						Street: st, Energy: names, Slot0: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC),
						Deadline: time.Now().Add(30 * time.Second), Publish: b.publish, Heartbeat: 50 * time.Millisecond})
				}()
			}
			wg.Wait()
			for i, m := range got {
				if errs[i] != nil {
					t.Fatalf("%s: %v", m.Home.Name, errs[i])
				}
				if res[i].Sweeps != cr.Rounds || res[i].Moves != cr.Moves || len(res[i].Missing) != 0 {
					t.Errorf("%s: %+v; CoordinateStreet: %d rounds, %d moves", m.Home.Name, res[i], cr.Rounds, cr.Moves)
				}
				if math.Abs(res[i].Objective-cr.Final) > 1e-9*math.Max(1, math.Abs(cr.Final)) {
					t.Errorf("%s: objective %.12g, CoordinateStreet %.12g", m.Home.Name, res[i].Objective, cr.Final)
				}
				for k := range m.Plan.Import {
					if d := m.Plan.Import[k] - want[i].Plan.Import[k]; math.Abs(d) > 1e-9 {
						t.Errorf("%s slot %d: import %g, CoordinateStreet %g", m.Home.Name, k, m.Plan.Import[k], want[i].Plan.Import[k])
					}
				}
			}
		})
	}
}
