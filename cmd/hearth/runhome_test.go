package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	_ "time/tzdata" // the schedule's clock-change cases, on any machine

	"github.com/hearth-dcop/hearth/internal/daemon"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/mosquitto"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// exampleHomes are the homes of examples/neighbourhood, in file order.
var exampleHomes = []string{"alder", "birch", "cedar", "dogwood"}

// copyExample copies examples/neighbourhood into a new folder, adding
// extra to the neighbourhood file, and returns the folder. The copy keeps
// the catalogue's fixed power levels on the EVs and the battery
// (power_steps = "fixed") and runs no improvement phase ([solver]
// improve = -1): the tests compare every round of the `hearth run` homes
// with `hearth sim` on the same files, whose phase restarts in process
// from the SH-MGM-style baseline's plan, which the homes cannot; and the
// fixed levels keep the rounds short under the race detector, where the
// fault matrix's time-outs bound them.
func copyExample(t *testing.T, extra string) string {
	t.Helper()
	path := fixtures.ExampleStreet(t, filepath.Join("..", ".."), `power_steps = "fixed"`)
	edit(t, filepath.Dir(path), "neighbourhood.toml", "seed = 1", "seed = 1\nimprove = -1")
	if extra != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("\n" + extra); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Dir(path)
}

// edit replaces old by new in a file of dir, which must hold it.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s holds no %q", file, old)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// simHomes is `hearth sim FILE --json` for a neighbourhood: the result and
// every home's schedule.
func simHomes(t *testing.T, path string) report.Homes {
	t.Helper()
	h := homesJSON(t, "sim", path, "--json", "--run-id", "want")
	if h.Objective == nil || len(h.Schedules) != len(exampleHomes) {
		t.Fatalf("sim: objective %v, %d schedules", h.Objective, len(h.Schedules))
	}
	return h
}

// homesJSON runs hearth with args (a command that prints a
// neighbourhood's result with --json), wants exit 0 and returns the result.
func homesJSON(t *testing.T, args ...string) report.Homes {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	var h report.Homes
	if err := json.Unmarshal(out.Bytes(), &h); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out.String())
	}
	return h
}

// checkHomeRound is checkRound for a neighbourhood's round: the same
// assignment, and the objective up to the order of a floating-point sum
// (sim evaluates every function of the assignment, a DPOP agent reports
// the sum the UTIL messages carried: 63.927000000000014 and 63.927 on the
// example).
func checkHomeRound(t *testing.T, want report.Homes, reps []daemon.RoundResult) {
	t.Helper()
	for i := range reps {
		r := &reps[i]
		if r.Objective == nil || math.Abs(*r.Objective-*want.Objective) > 1e-9*max(1, math.Abs(*want.Objective)) {
			t.Errorf("home %s: objective %v, sim says %v", r.Agent, fmtObjective(r.Objective), *want.Objective)
			continue
		}
		r.Objective = want.Objective
	}
	checkRound(t, want.Result, reps)
}

// startHome starts `hearth run -c PATH --home NAME ARGS` as a process, in
// UTC so that the plans' wall-clock times are known; it is killed when the
// test ends.
func startHome(t *testing.T, name, path string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{name: name, out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan struct{})}
	full := append([]string{"run", "--insecure", "-c", path, "--home", name, "--log-level", "info"}, append(args, fastFlags...)...)
	p.cmd = exec.Command(os.Args[0], full...)
	p.cmd.Env = append(os.Environ(), execEnv+"=1", "TZ=UTC")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() || os.Getenv("HEARTH_TEST_LOGS") != "" {
			t.Logf("home %s (pid %d):\n%s", name, p.cmd.Process.Pid, p.errb.String())
		}
	})
	return p
}

// recorder keeps every message a test client receives, so that a test
// waits for what it expects after a point (mark) with a deadline.
type recorder struct {
	mu   sync.Mutex
	msgs []paho.Message
	// more is closed, and replaced, at every message.
	more chan struct{}
}

func record(t *testing.T, url string, filters ...string) *recorder {
	t.Helper()
	r := &recorder{more: make(chan struct{})}
	for _, f := range filters {
		watchRaw(t, url, f, func(m paho.Message) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.msgs = append(r.msgs, m)
			close(r.more)
			r.more = make(chan struct{})
		})
	}
	return r
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

// since returns the messages from index from on.
func (r *recorder) since(from int) []paho.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs[from:])
}

// await returns the first message from index from on that ok accepts.
func (r *recorder) await(t *testing.T, from int, what string, ok func(paho.Message) bool) paho.Message {
	t.Helper()
	m, _ := r.awaitAt(t, from, what, ok)
	return m
}

// awaitAt is await that also returns the message's index.
func (r *recorder) awaitAt(t *testing.T, from int, what string, ok func(paho.Message) bool) (paho.Message, int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for i := from; ; {
		r.mu.Lock()
		for ; i < len(r.msgs); i++ {
			if ok(r.msgs[i]) {
				m := r.msgs[i]
				r.mu.Unlock()
				return m, i
			}
		}
		more := r.more
		r.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// live accepts a message on tp that the broker forwarded as it was
// published, not a retained copy from before.
func live(tp string) func(paho.Message) bool {
	return func(m paho.Message) bool { return m.Topic() == tp && !m.Retained() }
}

// round is what the recorder saw of a round: every home's result, and
// where in the record each one is (a home publishes its plan after it).
type round struct {
	reps []daemon.RoundResult
	at   map[string]int
}

// awaitRound waits for every home's result of round id.
func (r *recorder) awaitRound(t *testing.T, from int, prefix, id string) round {
	t.Helper()
	rd := round{at: map[string]int{}}
	for _, h := range exampleHomes {
		m, i := r.awaitAt(t, from, "the result of "+h+" in round "+id, live(topic.ResultTopic(prefix, id, h)))
		var rep daemon.RoundResult
		if err := json.Unmarshal(m.Payload(), &rep); err != nil {
			t.Fatal(err)
		}
		rd.reps = append(rd.reps, rep)
		rd.at[h] = i
	}
	return rd
}

// checkPlans checks the plans each home published after its result of
// round rd against the schedules of want: each device's actions and kW
// per slot, each home's load, and the wall-clock start of slot 0 when
// start is set.
func (r *recorder) checkPlans(t *testing.T, rd round, prefix string, want report.Homes, start string) {
	t.Helper()
	for _, hp := range want.Schedules {
		from := rd.at[hp.Home]
		for _, d := range hp.Devices {
			tp := prefix + "/home/" + hp.Home + "/plan/" + d.Device
			var got report.PlanPayload
			if err := json.Unmarshal(r.await(t, from, tp, live(tp)).Payload(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Home != hp.Home || got.Device != d.Device || len(got.Slots) != len(d.Actions) {
				t.Fatalf("%s: %+v", tp, got)
			}
			for i, s := range got.Slots {
				if s.Action != d.Actions[i] || s.KW != d.KW[i] {
					t.Errorf("%s slot %d: %s %v kW, sim says %s %v kW", tp, i, s.Action, s.KW, d.Actions[i], d.KW[i])
				}
			}
			if start != "" && got.Slots[0].Start != start {
				t.Errorf("%s: slot 0 starts %s, want %s", tp, got.Slots[0].Start, start)
			}
		}
		tp := prefix + "/home/" + hp.Home + "/load"
		var got report.LoadPayload
		if err := json.Unmarshal(r.await(t, from, tp, live(tp)).Payload(), &got); err != nil {
			t.Fatal(err)
		}
		if got.PeakKW != hp.PeakKW || got.EnergyCost != hp.EnergyCost || len(got.Slots) != len(hp.LoadKW) {
			t.Errorf("%s: %+v, sim says peak %v cost %v", tp, got, hp.PeakKW, hp.EnergyCost)
		}
		for i, s := range got.Slots {
			if s.KW != hp.LoadKW[i] {
				t.Errorf("%s slot %d: %v kW, sim says %v", tp, i, s.KW, hp.LoadKW[i])
			}
		}
	}
}

// waitLog waits until every process has logged all of parts on one line.
func waitLog(t *testing.T, ps []*agentProc, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ps {
		for !hasLine(p.errb.String(), parts) {
			if time.Now().After(deadline) {
				t.Fatalf("home %s never logged %q:\n%s", p.name, parts, p.errb.String())
			}
			select {
			case <-p.done:
				t.Fatalf("home %s exited:\n%s", p.name, p.errb.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

func hasLine(log string, parts []string) bool {
	for _, l := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// startHomes starts every example home on path and waits until each is
// present and listening.
func startHomes(t *testing.T, rec *recorder, prefix, path string, args ...string) []*agentProc {
	t.Helper()
	from := rec.mark()
	var ps []*agentProc
	for _, h := range exampleHomes {
		ps = append(ps, startHome(t, h, path, args...))
	}
	for _, h := range exampleHomes {
		rec.await(t, from, h+" online", func(m paho.Message) bool {
			return m.Topic() == prefix+"/presence/"+h && strings.Contains(string(m.Payload()), `"online"`)
		})
	}
	return ps
}

// hashedRound is the round alder's edit calls for.
var hashedRound = regexp.MustCompile(`^alder-[0-9a-f]{8}$`)

// TestRunHomeProcesses runs the example's four homes as `hearth run -c …
// --home NAME` processes over Mosquitto, with the broker, the topic
// prefix and Home Assistant discovery from the file, and starts rounds in
// every way but the schedule (TestRunHomeSchedule): a controller's
// command, SIGHUP, an edited home file, and an invalid edit that must
// start nothing. Every round gives `hearth sim`'s answer on the same
// files, and the published plans are sim's schedules.
func TestRunHomeProcesses(t *testing.T) {
	b := mosquitto.Start(t, mosquitto.Options{})
	const prefix = "street/hearth"
	dir := copyExample(t, "")
	want := simHomes(t, filepath.Join(dir, "neighbourhood.toml"))
	// The homes' copy names the broker; sim's stays on its embedded one.
	nb := filepath.Join(dir, "homes.toml")
	src, err := os.ReadFile(filepath.Join(dir, "neighbourhood.toml"))
	if err != nil {
		t.Fatal(err)
	}
	extra := "\n[broker]\nurl = \"" + b.URL() + "\"\ntopic_prefix = \"" + prefix + "\"\n[publish]\nhome_assistant = true\n"
	if err := os.WriteFile(nb, append(src, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := record(t, b.URL(), prefix+"/#", "homeassistant/#")
	ps := startHomes(t, rec, prefix, nb, "--watch", "50ms")
	c := testClient(t, b.URL(), "controller")

	// A controller's command, with the instant to plan from: 12:00 UTC
	// puts slot 0 (17:00) the same day.
	from := rec.mark()
	publish(t, c, prefix+"/cmd", `{"round": "c1", "at": "2026-11-22T12:00:00Z"}`)
	rd := rec.awaitRound(t, from, prefix, "c1")
	checkHomeRound(t, want, rd.reps)
	rec.checkPlans(t, rd, prefix, want, "2026-11-22T17:00:00Z")
	for _, h := range exampleHomes {
		for _, id := range []string{"hearth_" + h + "_load", "hearth_" + h + "_" + want.Schedules[slices.Index(exampleHomes, h)].Devices[0].Device} {
			tp := "homeassistant/sensor/" + h + "/" + id + "/config"
			var cfg report.HASensor
			if err := json.Unmarshal(rec.await(t, from, tp, live(tp)).Payload(), &cfg); err != nil {
				t.Fatal(err)
			}
			if cfg.UniqueID != id || !strings.HasPrefix(cfg.StateTopic, prefix+"/home/"+h+"/") {
				t.Errorf("%s: %+v", tp, cfg)
			}
		}
	}

	// SIGHUP: birch asks on its request topic, and every home joins.
	from = rec.mark()
	if err := ps[1].cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	m := rec.await(t, from, "birch's request", live(prefix+"/cmd/birch"))
	req, err := mqtt.ParseCommand(m.Payload())
	if err != nil || !strings.HasPrefix(req.ID, "birch-") || req.From != `home "birch"` {
		t.Fatalf("request %s: %+v, %v", m.Payload(), req, err)
	}
	rd = rec.awaitRound(t, from, prefix, req.ID)
	checkHomeRound(t, want, rd.reps)
	// A request carries the instant the homes plan from: slot 0 is the
	// next 17:00 (UTC, the homes' time zone).
	slot0 := time.Date(req.At.Year(), req.At.Month(), req.At.Day(), 17, 0, 0, 0, time.UTC)
	if slot0.Before(req.At) {
		slot0 = slot0.AddDate(0, 0, 1)
	}
	rec.checkPlans(t, rd, prefix, want, slot0.Format(time.RFC3339))

	// An edited home file: alder's car must hold 50 kWh, not 40. The
	// homes share the folder, so every home may see it and ask, all for
	// the round the change names: alder-<hash of the new model>. Every
	// home reloads before the round.
	from = rec.mark()
	edit(t, dir, "alder.toml", "charge geq 40", "charge geq 50")
	want2 := simHomes(t, filepath.Join(dir, "neighbourhood.toml"))
	if slices.Equal(want2.Schedules[0].Devices[0].Actions, want.Schedules[0].Devices[0].Actions) {
		t.Fatal("the edit does not change alder's plan: the test would prove nothing")
	}
	m = rec.await(t, from, "a request after the edit", func(m paho.Message) bool {
		return strings.HasPrefix(m.Topic(), prefix+"/cmd/") && !m.Retained()
	})
	req2, err := mqtt.ParseCommand(m.Payload())
	if err != nil || !hashedRound.MatchString(req2.ID) {
		t.Fatalf("request %s: %+v, %v", m.Payload(), req2, err)
	}
	rd = rec.awaitRound(t, from, prefix, req2.ID)
	checkHomeRound(t, want2, rd.reps)
	rec.checkPlans(t, rd, prefix, want2, "")
	for _, m := range rec.since(from) {
		if r, err := mqtt.ParseCommand(m.Payload()); strings.HasPrefix(m.Topic(), prefix+"/cmd/") && (err != nil || r.ID != req2.ID) {
			t.Errorf("a second round for one change: %s %s", m.Topic(), m.Payload())
		}
	}

	// An invalid edit: every home logs the fault where it is, and asks
	// for nothing. A command then runs on the last good files.
	from = rec.mark()
	edit(t, dir, "birch.toml", `kind = "washer"`, `kind = "washr"`)
	waitLog(t, ps, "input files invalid", "birch.toml:16: device[1].kind", `did you mean \"washer\"`)
	publish(t, c, prefix+"/cmd", `{"round": "c2"}`)
	checkHomeRound(t, want2, rec.awaitRound(t, from, prefix, "c2").reps)
	for _, m := range rec.since(from) {
		if strings.HasPrefix(m.Topic(), prefix+"/cmd/") {
			t.Errorf("the invalid edit started a round: %s %s", m.Topic(), m.Payload())
		}
	}
}

// TestRunHomeSchedule: with [run] every = "2s" the homes run a round every
// two seconds of the clock without any message, each under the id of its
// time, with `hearth sim`'s answer. The schedule is added while the homes
// run: a change of [run] alone re-arms the schedule and starts no round.
func TestRunHomeSchedule(t *testing.T) {
	b := mosquitto.Start(t, mosquitto.Options{})
	dir := copyExample(t, "")
	// A home that armed the schedule just after a scheduled time (the
	// homes reload a few milliseconds apart) waits in it alone until its
	// time-out; the rounds after it are joined by all.
	// sim's answer first: the 5 s bound is the homes' rounds', and a sim
	// under -race on a loaded machine can outlast it (exit 4, stopped).
	path := filepath.Join(dir, "neighbourhood.toml")
	want := simHomes(t, path)
	edit(t, dir, "neighbourhood.toml", "seed = 1", "seed = 1\ntimeout = \"5s\"")
	rec := record(t, b.URL(), "hearth/#")
	ps := startHomes(t, rec, "hearth", path, "--broker", b.URL(), "--watch", "50ms")
	from := rec.mark()
	edit(t, dir, "neighbourhood.toml", "[solver]", "[run]\nevery = \"2s\"\n\n[solver]")
	waitLog(t, ps, "rounds scheduled")
	scheduled := regexp.MustCompile(`^hearth/(\d{4}-\d\d-\d\dT\d\d\d\d(\d\d))/result/(\w+)$`)
	var done []string
	ok := map[string]map[string]daemon.RoundResult{}
	rec.await(t, from, "two scheduled rounds every home completed", func(m paho.Message) bool {
		sm := scheduled.FindStringSubmatch(m.Topic())
		if sm == nil {
			return false
		}
		var rep daemon.RoundResult
		if err := json.Unmarshal(m.Payload(), &rep); err != nil || rep.Error != "" {
			return false
		}
		if s, _ := strconv.Atoi(sm[2]); s%2 != 0 {
			t.Errorf("round %s is not on the 2 s grid", sm[1])
		}
		if ok[sm[1]] == nil {
			ok[sm[1]] = map[string]daemon.RoundResult{}
		}
		ok[sm[1]][sm[3]] = rep
		if len(ok[sm[1]]) == len(exampleHomes) {
			done = append(done, sm[1])
		}
		return len(done) == 2
	})
	for _, id := range done {
		var reps []daemon.RoundResult
		for _, h := range exampleHomes {
			reps = append(reps, ok[id][h])
		}
		checkHomeRound(t, want, reps)
	}
	if done[0] >= done[1] {
		t.Errorf("rounds %v out of order", done)
	}
	for _, m := range rec.since(from) {
		if strings.HasPrefix(m.Topic(), "hearth/cmd/") {
			t.Errorf("a change of [run] asked for a round: %s %s", m.Topic(), m.Payload())
		}
	}
}

// TestRunHomeOnce runs every home with --once in this process over the
// embedded broker: results and plans as `hearth sim`'s.
func TestRunHomeOnce(t *testing.T) {
	exampleTOML := filepath.Join(copyExample(t, ""), "neighbourhood.toml")
	want := simHomes(t, exampleTOML)
	b := startEmbedded(t)
	args := append([]string{"run", "--insecure", "-c", exampleTOML, "--broker", b.URL(), "--run-id", "once"}, fastFlags...)
	var reps []daemon.RoundResult
	for i, rep := range runHomesOnce(t, testCtx(t, 60*time.Second), args, exampleHomes) {
		reps = append(reps, rep)
		if rep.Agent != exampleHomes[i] {
			t.Errorf("result %d is %s's", i, rep.Agent)
		}
	}
	checkHomeRound(t, want, reps)
	// The retained plans are there for a client that comes later.
	c := testClient(t, b.URL(), "reader")
	for _, hp := range want.Schedules {
		tp := "hearth/home/" + hp.Home + "/plan/" + hp.Devices[0].Device
		m := waitFor(t, watch(t, c, []string{tp}), func(paho.Message) bool { return true }, tp)
		var got report.PlanPayload
		if err := json.Unmarshal(m.Payload(), &got); err != nil {
			t.Fatal(err)
		}
		for i, s := range got.Slots {
			if s.Action != hp.Devices[0].Actions[i] {
				t.Errorf("%s slot %d: %s, sim says %s", tp, i, s.Action, hp.Devices[0].Actions[i])
			}
		}
		if got.Slots[0].Start == "" {
			t.Errorf("%s: no wall-clock times", tp)
		}
	}
}

// runHomesOnce is runOnceInProcess for homes (--home instead of --agent).
func runHomesOnce(t *testing.T, ctx context.Context, args []string, homes []string) []daemon.RoundResult {
	t.Helper()
	reps := make([]daemon.RoundResult, len(homes))
	var wg sync.WaitGroup
	for i, h := range homes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb syncBuffer
			full := append(slices.Clone(args), "--home", h, "--once", "--json", "--log-level", "warn")
			if code := run(ctx, full, &out, &errb); code != exitOK {
				t.Errorf("home %s: exit %d\n%s", h, code, errb.String())
				return
			}
			if err := json.Unmarshal([]byte(out.String()), &reps[i]); err != nil {
				t.Errorf("home %s: %v\n%s", h, err, out.String())
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return reps
}

func TestRunHomeUsage(t *testing.T) {
	bad := writeFile(t, "bad.toml", "homes = [\"x.toml\"]\n[horizon]\nslots = \"12\"\n")
	noop := "tcp://127.0.0.1:1"
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no broker", []string{"-c", exampleTOML, "--home", "alder"}, exitUsage, "no broker: a home meets the others at an MQTT broker"},
		{"no broker says sim", []string{"-c", exampleTOML, "--home", "alder"}, exitUsage, "hearth sim " + exampleTOML},
		{"unknown home", []string{"-c", exampleTOML, "--home", "elm", "--broker", noop}, exitUsage, `no agent "elm" (agents: alder, birch, cedar, dogwood)`},
		{"no home", []string{"-c", exampleTOML, "--broker", noop}, exitUsage, "--home NAME is required"},
		{"no file", []string{"--home", "alder", "--broker", noop}, exitUsage, "--home needs the neighbourhood"},
		{"both files", []string{"-c", exampleTOML, "--shds", "x.json", "--home", "alder"}, exitUsage, "not both"},
		{"both modes", []string{"-c", exampleTOML, "--home", "alder", "--instance", "x.xml"}, exitUsage, "not both"},
		{"positional", []string{exampleTOML, "--home", "alder"}, exitUsage, "-c FILE --home NAME"},
		{"bad file", []string{"-c", bad, "--home", "alder", "--broker", noop}, exitUsage, "bad.toml:3: horizon.slots: want an integer"},
		{"global none", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--global", "none"}, exitUsage, "name a protocol"},
		{"discovery prefix", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--discovery-prefix", "ha/#"}, exitUsage, "--discovery-prefix"},
		{"watch", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--watch", "-1s"}, exitUsage, "--watch"},
		{"once", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--once"}, exitUsage, "--run-id"},
		{"now", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--now", "06:00"}, exitUsage, "--now \"06:00\": want an RFC 3339 time"},
		{"epoch", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--epoch", "soon"}, exitUsage, "--epoch \"soon\""},
		{"mixed street's compiled home without live", []string{"-c", "../../examples/energy-street/street.toml", "--home", "alder", "--broker", noop}, exitUsage,
			`homes fir, hazel say planner = "energy", and hearth run plans energy homes only with [live]`},
		{"mixed street's energy home without live", []string{"-c", "../../examples/energy-street/street.toml", "--home", "fir", "--broker", noop}, exitUsage,
			"energy-street/street.toml: hearth run plans an energy home from its live state: the file needs a [live] table"},
		{"energy home without live", []string{"-c", filepath.Join("testdata", "energy-nolive.toml"), "--home", "fir", "--broker", noop}, exitUsage, "needs a [live] table"},
		{"speed", []string{"-c", exampleTOML, "--home", "alder", "--broker", noop, "--now", "2026-11-26T06:00:00Z", "--speed", "0"}, exitUsage, "--speed: speed 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb syncBuffer
			if code := run(context.Background(), append([]string{"run"}, tc.args...), &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q: %s", tc.stderr, errb.String())
			}
		})
	}
}

func TestRunHomeBroker(t *testing.T) {
	file := &config.Config{Broker: config.Broker{URL: "ssl://street:8883", Username: "alder", Password: "pw", CAFile: "/ca.pem", TopicPrefix: "elm"}}
	flags := brokerOptions{url: "tcp://local:1883", username: "u", prefix: "hearth"}
	for _, tc := range []struct {
		name string
		set  []string
		c    *config.Config
		want brokerOptions
	}{
		{"file", nil, file, brokerOptions{url: "ssl://street:8883", username: "alder", password: "pw", ca: "/ca.pem", prefix: "elm"}},
		{"flags", []string{"broker", "username", "prefix"}, file, brokerOptions{url: "tcp://local:1883", username: "u", password: "pw", prefix: "hearth"}},
		{"no file", []string{"broker"}, nil, flags},
		{"prefix only", []string{"prefix"}, file, brokerOptions{url: "ssl://street:8883", username: "alder", password: "pw", ca: "/ca.pem", prefix: "hearth"}},
	} {
		set := map[string]bool{}
		for _, s := range tc.set {
			set[s] = true
		}
		if got := homeBroker(set, flags, tc.c); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
