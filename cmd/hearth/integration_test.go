package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/daemon"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/internal/mosquitto"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/envelope"
)

// These tests run `hearth run` agents as OS processes, over Debian's
// mosquitto on loopback: the test binary re-executes itself as the hearth
// binary (execEnv), so nothing is built and, under -race, the agents run
// race-checked too.

// execEnv makes the test binary behave as the hearth command.
const execEnv = "HEARTH_TEST_EXEC_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// agentProc is one `hearth run` process.
type agentProc struct {
	name      string
	cmd       *exec.Cmd
	out, errb *syncBuffer
	done      chan struct{}
}

// startAgent starts `hearth run ARGS --agent NAME --json`; it is killed
// when the test ends.
func startAgent(t *testing.T, name string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{name: name, out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan struct{})}
	full := append(append([]string{"run", "--insecure"}, args...), "--agent", name, "--json", "--log-level", "info")
	p.cmd = exec.Command(os.Args[0], full...)
	p.cmd.Env = append(os.Environ(), execEnv+"=1")
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
			t.Logf("agent %s (pid %d):\n%s", name, p.cmd.Process.Pid, p.errb.String())
		}
	})
	return p
}

// kill sends SIGKILL, as a crash would, and waits for the process.
func (p *agentProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// result waits for a `--once` process and returns its result.
func (p *agentProc) result(t *testing.T) daemon.RoundResult {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("agent %s still running after 90 s", p.name)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != exitOK {
		t.Fatalf("agent %s: exit %d", p.name, code)
	}
	var r daemon.RoundResult
	if err := json.Unmarshal([]byte(p.out.String()), &r); err != nil {
		t.Fatalf("agent %s: %v\n%s", p.name, err, p.out.String())
	}
	return r
}

func results(t *testing.T, ps []*agentProc) []daemon.RoundResult {
	t.Helper()
	var out []daemon.RoundResult
	for _, p := range ps {
		out = append(out, p.result(t))
	}
	return out
}

// onceArgs are the flags of a `--once` round of run id on url.
func onceArgs(path, url, run string, extra ...string) []string {
	return append(append([]string{"--instance", path, "--broker", url, "--once", "--run-id", run}, fastFlags...), extra...)
}

// TestProcessesAgree: three `hearth run --once` processes over mosquitto
// agree on `hearth solve`'s answer, with DPOP and with AFB.
func TestProcessesAgree(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=4", "domain=3", "--seed", "3")
	b := mosquitto.Start(t, mosquitto.Options{})
	for _, g := range []string{"dpop", "afb"} {
		t.Run(g, func(t *testing.T) {
			want := solveJSON(t, path, "--global", g)
			var ps []*agentProc
			for _, a := range agentNames(3) {
				ps = append(ps, startAgent(t, a, onceArgs(path, b.URL(), "agree-"+g, "--global", g)...))
			}
			checkRound(t, want, results(t, ps))
		})
	}
}

// watchRaw subscribes a test client to filter (mosquitto handles
// wildcards) and calls on for every message, on paho's goroutine.
func watchRaw(t *testing.T, url, filter string, on func(paho.Message)) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("watch-%d", time.Now().UnixNano())).
		SetCleanSession(true).SetAutoReconnect(false).SetConnectTimeout(5 * time.Second)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(0) })
	if tok := c.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) { on(m) }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher: %v", tok.Error())
	}
}

// TestProcessesBrokerRestart kills mosquitto in the middle of a DPOP
// round — frozen (SIGSTOP) the moment the first protocol message goes
// through it, so that the round cannot be over, then killed — and starts
// a new one on the same port that knows nothing of the round. The agents
// reconnect, resubscribe, republish their statuses, retransmit what was
// lost, and the round ends with `hearth solve`'s answer.
//
// The freeze comes from a watching client's callback, and on a loaded
// machine the few milliseconds of a small DPOP round can pass before it
// lands: an agent that finished the round on its first connection never
// met the restart, so such a round is run again under a new id (at most
// three times); every attempt's answer must be right, and one attempt
// must have every agent reconnect.
func TestProcessesBrokerRestart(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=6", "domain=3", "--seed", "5")
	want := solveJSON(t, path, "--global", "dpop")
	const attempts = 3
	for i := 1; i <= attempts; i++ {
		reps := brokerRestartRound(t, path, fmt.Sprintf("restart%d", i))
		checkRound(t, want, reps)
		reconnected := 0
		for _, r := range reps {
			if len(r.Stats) == 1 && r.Stats[0].Connects >= 2 {
				reconnected++
			}
		}
		if reconnected == len(reps) {
			return
		}
		t.Logf("attempt %d: %d of %d agents reconnected (the others had finished the round before the broker froze); again", i, reconnected, len(reps))
	}
	t.Fatalf("in %d attempts no round had every agent reconnect after the broker's restart", attempts)
}

// brokerRestartRound runs one round of TestProcessesBrokerRestart under
// run id run on a mosquitto of its own and returns the agents' results.
func brokerRestartRound(t *testing.T, path, run string) []daemon.RoundResult {
	t.Helper()
	b := mosquitto.Start(t, mosquitto.Options{})
	var once sync.Once
	killed := make(chan struct{})
	watchRaw(t, b.URL(), "hearth/"+run+"/inbox/+/+", func(paho.Message) {
		once.Do(func() {
			b.Pause()
			close(killed)
		})
	})
	var ps []*agentProc
	for _, a := range agentNames(3) {
		ps = append(ps, startAgent(t, a, onceArgs(path, b.URL(), run, "--global", "dpop")...))
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("no protocol message went through the broker")
	}
	b.Stop()
	time.Sleep(300 * time.Millisecond)
	b.Restart()
	return results(t, ps)
}

// TestProcessesAgentKilled kills an agent process (SIGKILL) in the middle
// of a round, once it has sent a few protocol messages, and starts it
// again. A protocol cannot resume, so the restarted agent and its peers
// stop the broken run and meet in the round's next attempt, which
// completes with `hearth solve`'s answer: every variable once, nothing
// lost or duplicated.
func TestProcessesAgentKilled(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=4", "domain=3", "--seed", "2")
	flags := []string{"--global", "mgm", "-p", "rounds=300"}
	want := solveJSON(t, append([]string{path}, flags...)...)
	b := mosquitto.Start(t, mosquitto.Options{})
	args := onceArgs(path, b.URL(), "kill", flags...)
	var ps []*agentProc
	for _, a := range agentNames(3) {
		ps = append(ps, startAgent(t, a, args...))
	}
	var (
		mu   sync.Mutex
		sent int
	)
	killed := make(chan struct{})
	watchRaw(t, b.URL(), "hearth/kill/inbox/+/a2", func(paho.Message) {
		mu.Lock()
		defer mu.Unlock()
		if sent++; sent == 5 {
			ps[2].kill()
			close(killed)
		}
	})
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("agent a2 sent no protocol message")
	}
	ps[2] = startAgent(t, "a2", args...)
	reps := results(t, ps)
	checkRound(t, want, reps)
	for _, r := range reps {
		if r.Run != "kill.retry1" || r.Attempts != 2 {
			t.Errorf("agent %s completed run %s after %d attempts, want kill.retry1 after 2", r.Agent, r.Run, r.Attempts)
		}
	}
}

// TestProcessesBridge grows past one broker: two mosquittos joined by a
// bridge that forwards <prefix>/# both ways, two agents on one and the
// third on the other. The round completes with the same answer.
func TestProcessesBridge(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=4", "domain=3", "--seed", "3")
	want := solveJSON(t, path, "--global", "dpop")
	a := mosquitto.Start(t, mosquitto.Options{})
	b := mosquitto.Start(t, mosquitto.Options{Extra: bridgeConf("hearth", a.Addr())})
	waitBridge(t, a.URL(), b.URL())
	ps := []*agentProc{
		startAgent(t, "a0", onceArgs(path, a.URL(), "bridge", "--global", "dpop")...),
		startAgent(t, "a1", onceArgs(path, a.URL(), "bridge", "--global", "dpop")...),
		startAgent(t, "a2", onceArgs(path, b.URL(), "bridge", "--global", "dpop")...),
	}
	checkRound(t, want, results(t, ps))
}

// bridgeConf is the mosquitto configuration of a bridge to the broker at
// addr that forwards <prefix>/# both ways (the README's example).
func bridgeConf(prefix, addr string) string {
	return fmt.Sprintf(`connection hearth-bridge
address %s
topic %s/# both 1
bridge_protocol_version mqttv311
try_private true
cleansession false
restart_timeout 1
`, addr, prefix)
}

// waitBridge waits until messages cross the bridge both ways.
func waitBridge(t *testing.T, a, b string) {
	t.Helper()
	for _, dir := range [][2]string{{a, b}, {b, a}} {
		got := make(chan struct{}, 1)
		watchRaw(t, dir[1], "hearth/probe", func(paho.Message) {
			select {
			case got <- struct{}{}:
			default:
			}
		})
		c := testClient(t, dir[0], fmt.Sprintf("probe-%d", time.Now().UnixNano()))
		deadline := time.After(20 * time.Second)
	probe:
		for {
			publish(t, c, "hearth/probe", "x")
			select {
			case <-got:
				break probe
			case <-time.After(200 * time.Millisecond):
			case <-deadline:
				t.Fatalf("nothing crossed the bridge from %s to %s", dir[0], dir[1])
			}
		}
	}
}

// TestProcessesACL: with mosquitto's per-home ACL (broker.MosquittoACL) and each home on its own credentials, a client that
// holds home a0's credentials cannot inject protocol messages as another
// home: the broker drops what it publishes on a2's topics, and a1 drops
// (and counts) an envelope that names a2 on a0's topic. The round then
// completes with `hearth solve`'s answer.
func TestProcessesACL(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=4", "domain=3", "--seed", "3")
	want := solveJSON(t, path, "--global", "dpop")
	users := map[string]string{"observer": "pw-observer"}
	for _, a := range agentNames(3) {
		users[a] = "pw-" + a
	}
	b := mosquitto.Start(t, mosquitto.Options{Users: users, ACL: broker.MosquittoACL("hearth")})
	creds := func(a string) []string { return []string{"--username", a, "--password", "pw-" + a} }
	args := onceArgs(path, b.URL(), "acl", "--global", "dpop")

	// a1 and a2 start and wait for a0.
	obs := testClientAs(t, b.URL(), "observer", "observer", "pw-observer")
	statuses := watch(t, obs, []string{"hearth/acl/status/a1", "hearth/acl/status/a2"})
	ps := []*agentProc{nil, startAgent(t, "a1", append(args, creds("a1")...)...), startAgent(t, "a2", append(args, creds("a2")...)...)}
	seen := map[string]bool{}
	for len(seen) < 2 {
		seen[waitFor(t, statuses, func(paho.Message) bool { return true }, "statuses of a1 and a2").Topic()] = true
	}

	// With a0's credentials: a forged UTIL message from a2, on a2's
	// topic (the ACL refuses it) and on a0's own (a1 refuses it), and a
	// forged status of a2.
	evil := testClientAs(t, b.URL(), "a0", "a0", "pw-a0")
	forged := forgedEnvelope(t, "acl", "a2", "a1")
	publish(t, evil, "hearth/acl/inbox/a1/a2", string(forged))
	publish(t, evil, "hearth/acl/inbox/a1/a0", string(forged))
	publish(t, evil, "hearth/acl/status/a2", `{"v":1,"agent":"a2","run":"acl","state":"failed","error":"forged"}`)
	evil.Disconnect(250)

	ps[0] = startAgent(t, "a0", append(args, creds("a0")...)...)
	reps := results(t, ps)
	checkRound(t, want, reps)
	if n := reps[1].Stats[0].Dropped["sender_mismatch"]; n != 1 {
		t.Errorf("a1 dropped %d envelopes as sender_mismatch, want 1: %+v", n, reps[1].Stats[0])
	}
}

// forgedEnvelope is a well-formed DPOP envelope from `from` to `to` in
// run, sequence 0, with a body no DPOP agent can decode: had it been
// delivered, the round would have failed.
func forgedEnvelope(t *testing.T, run, from, to string) []byte {
	t.Helper()
	h := envelope.Header{Run: run, Sender: from, Receiver: to, Protocol: "dpop", Kind: "util", Seq: 0}
	envs := envelope.Split(h, []byte("not a UTIL table"), envelope.DefaultMaxPayload)
	b, err := envs[0].Encode(envelope.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProcessesSignal: a long-running agent stops cleanly, with exit code
// 0, on SIGTERM and on SIGINT.
func TestProcessesSignal(t *testing.T) {
	path := genInstance(t, "random", "agents=2", "vars=2", "domain=2")
	b := mosquitto.Start(t, mosquitto.Options{})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := startAgent(t, "a0", append([]string{"--instance", path, "--broker", b.URL()}, fastFlags...)...)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(p.errb.String(), "ready: waiting for commands") {
			if time.Now().After(deadline) {
				t.Fatalf("agent not ready:\n%s", p.errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = p.cmd.Process.Signal(sig)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: still running", sig)
		}
		if code := p.cmd.ProcessState.ExitCode(); code != exitOK || !strings.Contains(p.errb.String(), "stopped") {
			t.Errorf("%v: exit %d\n%s", sig, code, p.errb.String())
		}
	}
}
