package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/broker"
)

// TestOnlineRoundStreet: the street round an energy home runs when
// every home of a mixed street has come online (onlineRound) answers the
// compiled homes' retained loads as `hearth sim`'s energy homes answer
// the compiled homes' plans: with their committed caps against the
// [feeder] limit and with the [coordination] neighbours' links. The
// street is cmd/hearth's energy-run mixed street (compiled alder and oak,
// energy fir and hazel) with a 7 kW soft limit and links alder–fir,
// oak–hazel; the compiled homes' loads and caps are retained on their
// load topics. The truth is devices/street's CoordinateStreet of the
// energy homes on street.StreetOf of the whole neighbourhood with those
// loads and caps: both energy homes' imports to 1e-6 kW, the sweeps and
// the moves. The answer without caps or links (every pair linked, the
// compiled homes' loads summed) differs from it, so the test shows it.
func TestOnlineRoundStreet(t *testing.T) {
	src := filepath.Join("..", "..", "cmd", "hearth", "testdata", "energy-run")
	dir := t.TempDir()
	for _, f := range []string{"mixed.toml", "alder.toml", "oak.toml", "fir.toml", "hazel.toml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "mixed.toml" {
			s := strings.Replace(string(b), "\n[horizon]", "neighbours = [[\"alder\", \"fir\"], [\"oak\", \"hazel\"], [\"fir\", \"hazel\"]]\n\n[horizon]", 1)
			b = []byte(s + "\n[feeder]\nlimit_kw = 7\n")
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "mixed.toml")
	conf, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 17, 0, 0, 0, time.Local)
	T := conf.Neighbourhood.Horizon.Slots
	// The compiled homes' loads (kW per slot) and caps (kW per window):
	// alder's car at 7.4 kW from 21:00 (slots 4–6), oak's boiler 2 kW
	// from 17:00.
	loads := map[string][]float64{"alder": make([]float64, T), "oak": make([]float64, T)}
	for t := range T {
		loads["alder"][t], loads["oak"][t] = 0.3, 0.4
	}
	for t := 4; t < 7; t++ {
		loads["alder"][t] = 7.4
	}
	for t := range 3 {
		loads["oak"][t] = 2
	}
	caps := map[string][]float64{"alder": {0.5, 7.4, 0.5, 0.5}, "oak": {2, 0.5, 0.5, 0.5}}

	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("test-online-round"))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(100)
	pub := func(topic, payload string) {
		t.Helper()
		if tok := c.Publish(topic, 1, true, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	for _, s := range [][3]string{{"alder", "ev", `"charge":15,"plugged":true`}, {"oak", "boiler", `"water_temp":48`},
		{"fir", "battery", `"soc":4`}, {"fir", "ev", `"charge":20,"plugged":true`}, {"hazel", "battery", `"soc":3`}} {
		pub(live.StateTopic("hearth", s[0], s[1]), fmt.Sprintf(`{"time":%q,%s}`, now.Format(time.RFC3339), s[2]))
	}
	for h, kw := range loads {
		var slots []string
		for t, v := range kw {
			slots = append(slots, fmt.Sprintf(`{"slot":%d,"time":"x","start":%q,"kw":%g}`, t, now.Add(time.Duration(t)*time.Hour).Format(time.RFC3339), v))
		}
		capsJSON := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(caps[h])), ","), "[]")
		pub("hearth/home/"+h+"/load", fmt.Sprintf(`{"round":"2026-11-26T1700","home":%q,"slot_minutes":60,"energy_kwh":0,"energy_cost":0,"peak_kw":0,"committed_kw":[%s],"slots":[%s]}`,
			h, capsJSON, strings.Join(slots, ",")))
	}

	// The truth: sim's energy homes' answer to these loads and caps.
	_, ms, err := street.Split(conf)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := street.PlanAlone(ctx, ms, street.Options{}); err != nil {
		t.Fatal(err)
	}
	flows := [][]float64{loads["alder"], loads["oak"]}
	committed := make([]float64, len(conf.Neighbourhood.Windows))
	for w := range committed {
		committed[w] = caps["alder"][w] + caps["oak"][w]
	}
	want, err := street.CoordinateStreet(ctx, ms, street.StreetOf(conf.Neighbourhood, ms, flows, committed), street.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Without caps or links: the summed loads as the base.
	_, plain, err := street.Split(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := street.PlanAlone(ctx, plain, street.Options{}); err != nil {
		t.Fatal(err)
	}
	base := make([]float64, T)
	for t := range T {
		base[t] = loads["alder"][t] + loads["oak"][t]
	}
	if _, err := street.Coordinate(ctx, plain, base, street.PeakOf(conf.Neighbourhood), street.Options{}); err != nil {
		t.Fatal(err)
	}
	differ := false
	for i := range ms {
		for t := range T {
			differ = differ || math.Abs(ms[i].Plan.Import[t]-plain[i].Plan.Import[t]) > 1e-3
		}
	}
	if !differ {
		t.Fatal("the answer without caps or links is the street's: the test would show nothing")
	}

	homes := []string{"fir", "hazel"}
	got := make([]EnergyRound, len(homes))
	logs := make([]*strings.Builder, len(homes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, h := range homes {
		clock, err := live.NewClock(now, time.Time{}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = &strings.Builder{}
		log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: logs[i]}, nil))
		cfg := mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Timing: mqtt.Timing{ConnectTimeout: 5 * time.Second}}
		e, err := NewEnergyHome(HomeConfig{Path: path, Home: h, MQTT: cfg, Log: log, Clock: clock}, conf)
		if err != nil {
			t.Fatal(err)
		}
		e.once = true // both take part, whatever their availability says
		e.timeout = 20 * time.Second
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := e.client.Connect(rctx); err != nil {
				t.Error(err)
				return
			}
			defer e.client.Close()
			if err := e.awaitState(rctx); err != nil {
				t.Error(err)
				return
			}
			res, err := e.plan(rctx, "2026-11-26T1700-all", now, onlineRound)
			if err != nil {
				t.Errorf("%s: %v", h, err)
				return
			}
			got[i] = res
		}()
	}
	wg.Wait()
	if t.Failed() {
		for i, h := range homes {
			t.Logf("%s:\n%s", h, logs[i].String())
		}
		return
	}
	for i, h := range homes {
		r := got[i]
		if len(r.CompiledMissing) != 0 || len(r.Street.Missing) != 0 || r.Street.Sweeps != want.Rounds || r.Street.Moves != want.Moves {
			t.Errorf("%s: %+v (compiled missing %v); want %d sweeps, %d moves", h, r.Street, r.CompiledMissing, want.Rounds, want.Moves)
		}
		for t2 := range T {
			if d := r.Plan.Import[t2] - ms[i].Plan.Import[t2]; math.Abs(d) > 1e-6 {
				t.Errorf("%s slot %d: import %g kW, the street's answer %g", h, t2, r.Plan.Import[t2], ms[i].Plan.Import[t2])
			}
		}
	}
	if !slices.Equal(homes, []string{ms[0].Home.Name, ms[1].Home.Name}) {
		t.Fatalf("energy homes %s, %s", ms[0].Home.Name, ms[1].Home.Name)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
