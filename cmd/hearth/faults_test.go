package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/internal/mosquitto"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/sign"
)

// The fault matrix: the example's four homes as `hearth run` processes
// over Mosquitto, one fault per case. Every case ends with a round whose
// plans must be `hearth sim`'s on the same files (the undisturbed plans),
// or with a clear failure; never a wrong plan, and never a wait past the
// round's time-out (every wait below is bounded).
// README.md's "Reliability" section reports the outcome and time of each
// case.
//
// HEARTH_FAULT_STOP sets how long the stopped home stays stopped (SIGSTOP;
// default 10s, the case is 60s); the round time-out of that case
// grows with it.

// faultStreet is one case's neighbourhood: a broker, the four homes, a
// recorder of everything under hearth/#, a controller client, and what
// `hearth sim` says the plans are.
type faultStreet struct {
	t    *testing.T
	b    *mosquitto.Broker
	path string
	rec  *recorder
	ps   []*agentProc
	ctl  paho.Client
	want report.Homes
	// keyDir and signer: the homes' key files and the controller's key
	// on a signed street (nil signer: unsigned).
	keyDir string
	signer *sign.Signer
}

// faultTimeout is the round time-out of the matrix's homes: a few
// seconds of work, so that a case that waits for it still ends quickly.
const faultTimeout = 20 * time.Second

// newStreet starts a broker (with extra configuration) and the four homes
// with round time-out timeout; signed gives every home and the controller
// a key (the neighbourhood's [keys] and [controllers]), so that the homes
// sign and check every message.
func newStreet(t *testing.T, timeout time.Duration, extra string, signed bool) *faultStreet {
	t.Helper()
	b := mosquitto.Start(t, mosquitto.Options{Extra: extra})
	var keys string
	s := &faultStreet{t: t, b: b}
	if signed {
		keys, s.keyDir, s.signer = streetKeys(t)
	}
	dir := copyExample(t, keys)
	s.path = filepath.Join(dir, "neighbourhood.toml")
	// sim's answer before the round time-out is written: it bounds the
	// homes' rounds, and a sim under -race on a loaded machine can
	// outlast the shortest (8 s: exit 4, stopped).
	s.want = simHomes(t, s.path)
	edit(t, dir, "neighbourhood.toml", "seed = 1", fmt.Sprintf("seed = 1\ntimeout = %q", timeout.String()))
	s.rec = record(t, b.URL(), "hearth/#")
	if signed {
		from := s.rec.mark()
		for _, h := range exampleHomes {
			s.ps = append(s.ps, startHome(t, h, s.path, append(s.args(), "--sign-key", filepath.Join(s.keyDir, h+".key"))...))
		}
		for _, h := range exampleHomes {
			s.rec.await(t, from, h+" online", func(m paho.Message) bool {
				return m.Topic() == "hearth/presence/"+h && strings.Contains(string(m.Payload()), `"online"`)
			})
		}
	} else {
		s.ps = startHomes(t, s.rec, "hearth", s.path, s.args()...)
	}
	s.ctl = testClient(t, b.URL(), "controller")
	return s
}

// streetKeys makes a key for every example home and a controller "ctl"
// (as `hearth keygen` does), writes the homes' private keys into a
// folder, and returns the neighbourhood's [keys] and [controllers] tables,
// the folder, and the controller's signer.
func streetKeys(t *testing.T) (string, string, *sign.Signer) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 1))
	random := readerFunc(func(p []byte) (int, error) {
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		return len(p), nil
	})
	var b strings.Builder
	b.WriteString("[keys]\n")
	for _, h := range exampleHomes {
		k, err := sign.Generate(h, random)
		if err != nil {
			t.Fatal(err)
		}
		if err := sign.WriteKey(filepath.Join(dir, h+".key"), k); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s = %q\n", h, sign.FormatPublic(k.Public()))
	}
	ctl, err := sign.Generate("ctl", random)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "[controllers]\nctl = %q\n", sign.FormatPublic(ctl.Public()))
	return b.String(), dir, ctl
}

// readerFunc is an io.Reader made of a function (seeded key material).
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func (s *faultStreet) args() []string {
	return []string{"--broker", s.b.URL(), "--watch", "0", "--insecure"}
}

// command publishes a controller's command for round id, created now.
func (s *faultStreet) command(id string, retained bool) {
	s.t.Helper()
	b, err := mqtt.EncodeCommand(mqtt.Request{ID: id, Created: time.Now()}, "")
	if err != nil {
		s.t.Fatal(err)
	}
	if s.signer != nil {
		b = s.signer.Seal("hearth/cmd", b)
	}
	s.publish("hearth/cmd", b, retained)
}

func (s *faultStreet) publish(tp string, b []byte, retained bool) {
	s.t.Helper()
	tok := s.ctl.Publish(tp, 1, retained, b)
	if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		s.t.Fatalf("publish %s: %v", tp, tok.Error())
	}
}

// undisturbed waits for every home's result of round id (recorded from
// index from on) and checks the results and the plans against sim's.
func (s *faultStreet) undisturbed(from int, id string) round {
	s.t.Helper()
	rd := s.rec.awaitRound(s.t, from, "hearth", id)
	for _, r := range rd.reps {
		if r.Error != "" {
			s.t.Fatalf("home %s: round %s failed: %s", r.Agent, id, r.Error)
		}
	}
	checkHomeRound(s.t, s.want, rd.reps)
	s.rec.checkPlans(s.t, rd, "hearth", s.want, "")
	return rd
}

// home returns the index of home name.
func home(name string) int {
	for i, h := range exampleHomes {
		if h == name {
			return i
		}
	}
	panic("no home " + name)
}

// onFirst calls f once, on the first message on filter.
func (s *faultStreet) onFirst(filter string, f func()) <-chan struct{} {
	var once sync.Once
	done := make(chan struct{})
	watchRaw(s.t, s.b.URL(), filter, func(paho.Message) {
		once.Do(func() {
			f()
			close(done)
		})
	})
	return done
}

func waitDone(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// faultCase is one row of the matrix.
type faultCase struct {
	name string
	// timeout is the round time-out (faultTimeout when zero); extra the
	// broker's added configuration.
	timeout time.Duration
	extra   string
	run     func(s *faultStreet)
	// signed runs the case on a street whose homes and controller sign
	// their messages (`hearth keygen` keys in [keys] and [controllers]).
	signed bool
}

func TestFaultMatrix(t *testing.T) {
	stop := 10 * time.Second
	if v := os.Getenv("HEARTH_FAULT_STOP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("HEARTH_FAULT_STOP=%q: %v", v, err)
		}
		stop = d
	}
	cases := []faultCase{
		{name: "broker killed and restarted mid-round", run: faultBrokerRestart},
		{name: "home killed and restarted mid-round, retained command", run: func(s *faultStreet) { faultKill(s, true) }},
		{name: "home killed and restarted mid-round, live command", run: func(s *faultStreet) { faultKill(s, false) }},
		{name: "home stopped mid-round", timeout: stop + faultTimeout, run: func(s *faultStreet) { faultStop(s, stop) }},
		{name: "home stopped past the round time-out", timeout: 8 * time.Second, run: faultStopTimeout},
		{name: "burst of commands", run: faultBurst},
		{name: "duplicate home name", run: faultDuplicate},
		{name: "finished round commanded again", run: faultFinished},
		{name: "forged statuses", run: faultForgedStatuses},
		{name: "forged commands", run: faultForgedCommands},
		{name: "10 MB junk on every topic", extra: "max_packet_size 20000000\n", run: faultJunk},
		{name: "forged retained inbox message", signed: true, run: faultForgedInbox},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			start := time.Now()
			timeout := tc.timeout
			if timeout == 0 {
				timeout = faultTimeout
			}
			tc.run(newStreet(t, timeout, tc.extra, tc.signed))
			t.Logf("%s: passed in %.1f s", tc.name, time.Since(start).Seconds())
		})
	}
}

// faultBrokerRestart kills Mosquitto the moment the first protocol
// message of a round goes through it and starts a new one on the same
// port, which knows nothing: the round completes with the undisturbed
// plans, and so does the next.
func faultBrokerRestart(s *faultStreet) {
	killed := s.onFirst("hearth/r1/inbox/+/+", s.b.Pause)
	s.command("r1", false)
	waitDone(s.t, killed, 30*time.Second, "a protocol message of r1")
	s.b.Stop()
	time.Sleep(300 * time.Millisecond)
	s.b.Restart()
	// The recorder lost its connection with the broker: a new one.
	s.rec = record(s.t, s.b.URL(), "hearth/#")
	s.ctl = testClient(s.t, s.b.URL(), "controller2")
	from := s.rec.mark()
	// r1's results were published after the restart, retained (the
	// recorder may come after them).
	var reps []daemon.RoundResult
	for _, h := range exampleHomes {
		m := s.rec.await(s.t, from, "the result of "+h+" in r1", func(m paho.Message) bool { return m.Topic() == "hearth/r1/result/"+h })
		var r daemon.RoundResult
		if err := json.Unmarshal(m.Payload(), &r); err != nil || r.Error != "" {
			s.t.Fatalf("%s: %s (%v)", m.Topic(), r.Error, err)
		}
		reps = append(reps, r)
	}
	checkHomeRound(s.t, s.want, reps)
	// The broker froze on the round's first protocol message, so the
	// round was not over: some home met the restart mid-round.
	reconnected := 0
	for _, r := range reps {
		if len(r.Stats) > 0 && r.Stats[0].Connects >= 2 {
			reconnected++
		}
	}
	if reconnected == 0 {
		s.t.Error("no home reconnected during r1: the restart came after the round")
	}
	from = s.rec.mark()
	s.command("r2", false)
	s.undisturbed(from, "r2")
}

// faultKill kills birch (SIGKILL) once it has sent a protocol message of
// round r1 and starts it again: the restarted birch rejoins r1 — from the
// retained command, or from the others' presence — and every home
// completes r1 in its next attempt with the undisturbed plans.
func faultKill(s *faultStreet, retained bool) {
	b := home("birch")
	killed := s.onFirst("hearth/r1/inbox/+/birch", s.ps[b].kill)
	from := s.rec.mark()
	s.command("r1", retained)
	waitDone(s.t, killed, 30*time.Second, "birch's first protocol message")
	s.ps[b] = startHome(s.t, "birch", s.path, s.args()...)
	rd := s.undisturbed(from, "r1")
	for _, r := range rd.reps {
		if r.Attempts < 2 {
			s.t.Errorf("home %s completed r1 in run %s, attempt %d: the killed run cannot have completed", r.Agent, r.Run, r.Attempts)
		}
	}
	from = s.rec.mark()
	s.command("r2", false)
	s.undisturbed(from, "r2")
}

// faultStop stops birch (SIGSTOP) for d once it has sent a protocol
// message of r1: the broker drops its connection (keep-alive), the others
// wait, and when it goes on it reconnects and the round completes.
func faultStop(s *faultStreet, d time.Duration) {
	b := home("birch")
	stopped := s.onFirst("hearth/r1/inbox/+/birch", func() { _ = s.ps[b].cmd.Process.Signal(syscall.SIGSTOP) })
	from := s.rec.mark()
	s.command("r1", false)
	waitDone(s.t, stopped, 30*time.Second, "birch's first protocol message")
	time.Sleep(d)
	if err := s.ps[b].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.t.Fatal(err)
	}
	s.undisturbed(from, "r1")
	from = s.rec.mark()
	s.command("r2", false)
	s.undisturbed(from, "r2")
}

// faultStopTimeout stops birch (SIGSTOP) mid-round for longer than the
// round time-out: every home gives r1 up at its time-out and says so in
// its result — birch at once when it goes on, its time-out past — and the
// next round has the undisturbed plans.
func faultStopTimeout(s *faultStreet) {
	b := home("birch")
	stopped := s.onFirst("hearth/r1/inbox/+/birch", func() { _ = s.ps[b].cmd.Process.Signal(syscall.SIGSTOP) })
	from := s.rec.mark()
	start := time.Now()
	s.command("r1", false)
	waitDone(s.t, stopped, 30*time.Second, "birch's first protocol message")
	time.Sleep(12 * time.Second)
	if err := s.ps[b].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.t.Fatal(err)
	}
	for _, h := range exampleHomes {
		m := s.rec.await(s.t, from, "the result of "+h+" in r1", live("hearth/r1/result/"+h))
		var r daemon.RoundResult
		if err := json.Unmarshal(m.Payload(), &r); err != nil {
			s.t.Fatal(err)
		}
		if !strings.Contains(r.Error, "deadline exceeded") && !strings.Contains(r.Error, "gave it up") {
			s.t.Errorf("home %s: r1 ended with %q, want the time-out", h, r.Error)
		}
	}
	// 8 s of time-out, 12 s stopped: every result within 2 s of birch
	// going on.
	if d := time.Since(start); d > 16*time.Second {
		s.t.Errorf("the round took %v to fail", d)
	}
	from = s.rec.mark()
	s.command("r2", false)
	s.undisturbed(from, "r2")
}

// faultBurst sends four rounds at once, out of order, one of them as a
// home's retained request: every home runs each once, in the order of
// creation then id, whatever the order of arrival.
func faultBurst(s *faultStreet) {
	from := s.rec.mark()
	t0 := time.Now()
	send := func(tp, id string, created time.Time, retained bool, by string) {
		b, err := mqtt.EncodeCommand(mqtt.Request{ID: id, Created: created}, by)
		if err != nil {
			s.t.Fatal(err)
		}
		s.publish(tp, b, retained)
	}
	send("hearth/cmd", "b4", t0.Add(3*time.Millisecond), false, "")
	send("hearth/cmd", "b3", t0.Add(2*time.Millisecond), false, "")
	send("hearth/cmd/cedar", "b2", t0.Add(time.Millisecond), true, "cedar")
	send("hearth/cmd", "b1", t0, false, "")
	order := []string{"b1", "b2", "b3", "b4"}
	at := map[string]map[string]int{}
	for _, id := range order {
		rd := s.undisturbed(from, id)
		at[id] = rd.at
	}
	for _, h := range exampleHomes {
		for k := 1; k < len(order); k++ {
			if at[order[k-1]][h] > at[order[k]][h] {
				s.t.Errorf("home %s ran %s after %s", h, order[k-1], order[k])
			}
		}
	}
	for _, m := range s.rec.since(from) {
		var r daemon.RoundResult
		if strings.Contains(m.Topic(), "/result/") && json.Unmarshal(m.Payload(), &r) == nil && r.Error != "" {
			s.t.Errorf("%s: %s", m.Topic(), r.Error)
		}
	}
}

// faultDuplicate starts a second process for birch: it stops within
// seconds with an error naming the first's client, and the first goes on
// with the undisturbed plans.
func faultDuplicate(s *faultStreet) {
	b := home("birch")
	dup := startHome(s.t, "birch", s.path, s.args()...)
	select {
	case <-dup.done:
	case <-time.After(30 * time.Second):
		s.t.Fatalf("the second birch still runs:\n%s", dup.errb.String())
	}
	first := s.ps[b].errb.String()
	i := strings.Index(first, "client=")
	if i < 0 {
		s.t.Fatalf("the first birch logged no client id:\n%s", first)
	}
	client := strings.Fields(first[i+len("client="):])[0]
	if code := dup.cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(dup.errb.String(), "already runs in process "+client) {
		s.t.Errorf("the second birch: exit %d, want %d and an error naming %s:\n%s", code, exitFailed, client, dup.errb.String())
	}
	select {
	case <-s.ps[b].done:
		s.t.Fatal("the first birch stopped")
	default:
	}
	from := s.rec.mark()
	s.command("r1", false)
	s.undisturbed(from, "r1")
}

// faultFinished restarts every home after round r1 and commands r1 again
// (a retained command found at start, or a reused id): each home finds
// its own status of r1 done and runs nothing, at once; its result of r1
// stands, and the next round has the undisturbed plans.
func faultFinished(s *faultStreet) {
	from := s.rec.mark()
	s.command("r1", true)
	s.undisturbed(from, "r1")
	for i, h := range exampleHomes {
		s.ps[i].kill()
		s.ps[i] = startHome(s.t, h, s.path, s.args()...)
	}
	waitLog(s.t, s.ps, "round already finished by an earlier process", "round=r1")
	from = s.rec.mark()
	s.command("r1", false) // reused
	s.command("r2", false)
	s.undisturbed(from, "r2")
	for _, m := range s.rec.since(from) {
		if strings.HasPrefix(m.Topic(), "hearth/r1/result/") {
			s.t.Errorf("r1 run again: %s %s", m.Topic(), m.Payload())
		}
	}
}

// faultForgedStatuses publishes, retained, before round r1: failed
// statuses of three homes in r1 (an attempt to veto it), and junk as the
// fourth's. The forged failures end r1's first attempt at once; its next
// attempt has the undisturbed plans.
func faultForgedStatuses(s *faultStreet) {
	for _, h := range exampleHomes[:3] {
		s.publish("hearth/r1/status/"+h, fmt.Appendf(nil, `{"v":2,"agent":%q,"run":"r1","nonce":7,"gen":1,"ver":1,"state":"failed","error":"forged","n":4,"peers":[],"sent":[],"delivered":[]}`, h), true)
	}
	s.publish("hearth/r1/status/dogwood", []byte(`{"v":2,"agent":"dogwood","state":"done"`), true)
	from := s.rec.mark()
	s.command("r1", false)
	rd := s.undisturbed(from, "r1")
	for _, r := range rd.reps {
		if r.Run != "r1.retry1" {
			s.t.Errorf("home %s completed r1 in run %s, want r1.retry1", r.Agent, r.Run)
		}
	}
}

// faultForgedCommands sends commands no home may run — malformed, a bad
// round id, oversized, stale, from the future — then a good one: only the
// good round runs, with the undisturbed plans.
func faultForgedCommands(s *faultStreet) {
	now := time.Now()
	cmd := func(id string, created time.Time) []byte {
		b, err := mqtt.EncodeCommand(mqtt.Request{ID: id, Created: created}, "")
		if err != nil {
			s.t.Fatal(err)
		}
		return b
	}
	from := s.rec.mark()
	s.publish("hearth/cmd", []byte("not json"), false)
	s.publish("hearth/cmd", []byte(`{"round": "a/b"}`), false)
	s.publish("hearth/cmd", []byte(`{"round": "big", "pad": "`+strings.Repeat("x", 8000)+`"}`), false)
	s.publish("hearth/cmd", cmd("stale", now.Add(-time.Hour)), true)
	s.publish("hearth/cmd/alder", cmd("future", now.Add(24*time.Hour)), false)
	s.command("r1", false)
	s.undisturbed(from, "r1")
	for _, m := range s.rec.since(from) {
		if strings.Contains(m.Topic(), "/result/") && !strings.HasPrefix(m.Topic(), "hearth/r1/") {
			s.t.Errorf("a forged command ran a round: %s", m.Topic())
		}
	}
	waitLog(s.t, s.ps, "stale command ignored", "round=stale")
	waitLog(s.t, s.ps, "command from the future ignored", "round=future")
}

// faultJunk publishes 10 MB of random bytes on every topic a home reads
// (retained on some), then commands a round: it has the undisturbed
// plans.
func faultJunk(s *faultStreet) {
	junk := make([]byte, 10<<20)
	rng := rand.New(rand.NewPCG(21, 5))
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	topics := []string{"hearth/cmd", "hearth/r1/multicast/alder"}
	for _, h := range exampleHomes {
		topics = append(topics, "hearth/cmd/"+h, "hearth/presence/"+h, "hearth/r1/status/"+h, "hearth/r1/inbox/"+h+"/cedar")
	}
	for i, tp := range topics {
		s.publish(tp, junk, i%2 == 0)
	}
	from := s.rec.mark()
	s.command("r1", false)
	s.undisturbed(from, "r1")
}

// faultForgedInbox is the forged-UTIL reproduction on a signed
// street: a round's first protocol messages are captured, and each is
// published again, retained, on the next round's inbox topic of its
// receiver — with its payload's bytes flipped, unsigned, and as it was
// (signed for the earlier round's topic) — before that round is
// commanded. The next round has the undisturbed plans, and its results
// count the drops.
func faultForgedInbox(s *faultStreet) {
	from := s.rec.mark()
	s.command("r0", false)
	s.undisturbed(from, "r0")
	var captured []paho.Message
	for _, m := range s.rec.since(from) {
		if strings.HasPrefix(m.Topic(), "hearth/r0/inbox/") && len(captured) < 4 {
			captured = append(captured, m)
		}
	}
	if len(captured) == 0 {
		s.t.Fatal("no protocol message of r0 recorded")
	}
	for i, m := range captured {
		tp := "hearth/r1/" + strings.TrimPrefix(m.Topic(), "hearth/r0/")
		b := slices.Clone(m.Payload())
		switch i % 3 {
		case 0: // tampered: every byte after the signature's header flipped
			for k := len(b) / 2; k < len(b); k++ {
				b[k] ^= 0xff
			}
		case 1: // the content alone, unsigned
			if _, content, err := sign.Parse(b); err == nil {
				b = content
			}
		}
		s.publish(tp, b, true)
		s.publish(tp, b, false)
	}
	from = s.rec.mark()
	s.command("r1", false)
	rd := s.undisturbed(from, "r1")
	var drops int64
	for _, r := range rd.reps {
		for _, n := range r.Dropped {
			drops += n
		}
	}
	if drops == 0 {
		s.t.Errorf("no home of r1 counted a dropped message: %+v", rd.reps)
	}
}
