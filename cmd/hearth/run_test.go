package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/daemon"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
)

// fastFlags keep reconnections and acknowledgements quick on loopback.
var fastFlags = []string{
	"--keepalive", "5s", "--connect-timeout", "3s", "--reconnect-max", "200ms",
	"--status-interval", "50ms", "--retransmit-after", "2s",
}

// syncBuffer is a bytes.Buffer that paho's and the agents' goroutines may
// write while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// genInstance writes `hearth gen` output into the test's folder.
func genInstance(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "inst.xml")
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(append([]string{"gen"}, args...), "-o", path), &out, &errb); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, errb.String())
	}
	return path
}

// solveJSON is `hearth solve --json`, the simulated runtime's answer.
func solveJSON(t *testing.T, args ...string) mva.Result {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(append([]string{"solve"}, args...), "--json"), &out, &errb); code != exitOK {
		t.Fatalf("solve: exit %d: %s", code, errb.String())
	}
	var r mva.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("solve: %v\n%s", err, out.String())
	}
	return r
}

func agentNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("a%d", i)
	}
	return names
}

// checkRound checks that the agents' results of one round agree with want:
// together they assign every variable exactly once, with want's values,
// every one completed the same run, and those that know the objective
// (DPOP and AFB tell every agent) report want's.
func checkRound(t *testing.T, want mva.Result, reps []daemon.RoundResult) {
	t.Helper()
	got := map[string]string{}
	for _, r := range reps {
		if r.Error != "" {
			t.Fatalf("agent %s: %s", r.Agent, r.Error)
		}
		if r.Run != reps[0].Run || r.Round != reps[0].Round {
			t.Errorf("agent %s finished round %s in run %s, agent %s round %s in run %s", r.Agent, r.Round, r.Run, reps[0].Agent, reps[0].Round, reps[0].Run)
		}
		for k, v := range r.Assignment {
			if _, dup := got[k]; dup {
				t.Errorf("variable %s reported twice", k)
			}
			got[k] = v
		}
		if r.Objective != nil && (want.Objective == nil || *r.Objective != *want.Objective) {
			t.Errorf("agent %s: objective %v, want %v", r.Agent, *r.Objective, fmtObjective(want.Objective))
		}
		if want.Optimal && r.Objective != nil && !r.Optimal {
			t.Errorf("agent %s does not claim the optimum it found", r.Agent)
		}
	}
	if len(got) != len(want.Assignment) {
		t.Errorf("%d variables reported, want %d", len(got), len(want.Assignment))
	}
	for k, v := range want.Assignment {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// runOnceInProcess runs `hearth run --once` for every agent, each on its
// own goroutine with its own output, and returns their results.
func runOnceInProcess(t *testing.T, ctx context.Context, args []string, agents []string) []daemon.RoundResult {
	t.Helper()
	reps := make([]daemon.RoundResult, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb syncBuffer
			full := append(slices.Clone(args), "--agent", a, "--once", "--json", "--log-level", "warn")
			if code := run(ctx, full, &out, &errb); code != exitOK {
				t.Errorf("agent %s: exit %d\n%s", a, code, errb.String())
				return
			}
			if err := json.Unmarshal([]byte(out.String()), &reps[i]); err != nil {
				t.Errorf("agent %s: %v\n%s", a, err, out.String())
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return reps
}

func startEmbedded(t *testing.T) *broker.Broker {
	t.Helper()
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestRunOnceAgrees runs one `hearth run --once` per agent over the
// embedded broker and checks that together they give `hearth solve`'s
// answer, for both exact protocols and with a reformulation that gives a
// process several protocol agents.
func TestRunOnceAgrees(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=4", "domain=3", "--seed", "7")
	b := startEmbedded(t)
	for i, tc := range [][]string{
		{"--global", "dpop"},
		{"--global", "afb"},
		{"--global", "dpop", "--reform", "decomposition"},
		{"--global", "afb", "--reform", "compilation"},
	} {
		t.Run(strings.Join(tc, " "), func(t *testing.T) {
			want := solveJSON(t, append([]string{path}, tc...)...)
			args := append([]string{"run", "--insecure", "--instance", path, "--broker", b.URL(), "--run-id", fmt.Sprintf("once-%d", i)}, tc...)
			reps := runOnceInProcess(t, testCtx(t, 60*time.Second), append(args, fastFlags...), agentNames(3))
			checkRound(t, want, reps)
			for _, r := range reps {
				if r.Attempts != 1 || len(r.Stats) == 0 || r.Stats[0].Delivered == 0 {
					t.Errorf("agent %s: %d attempts, stats %+v", r.Agent, r.Attempts, r.Stats)
				}
			}
		})
	}
}

// TestRunServe runs three long-running agents: they come online, run a
// round for every command on <prefix>/cmd, publish their results, and
// stop cleanly when their context ends (SIGINT, SIGTERM).
func TestRunServe(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=3", "domain=3", "--seed", "11")
	want := solveJSON(t, path, "--global", "dpop")
	b := startEmbedded(t)
	ctx, stop := context.WithCancel(testCtx(t, 60*time.Second))
	names := agentNames(3)
	codes := make([]int, len(names))
	logs := make([]syncBuffer, len(names))
	var wg sync.WaitGroup
	for i, a := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"run", "--insecure", "--instance", path, "--agent", a, "--broker", b.URL(), "--prefix", "street/hearth", "--run-id", "r0"}, fastFlags...)
			codes[i] = run(ctx, args, io.Discard, &logs[i])
		}()
	}
	defer func() {
		stop()
		wg.Wait()
		for i, c := range codes {
			if c != exitOK {
				t.Errorf("agent %s: exit %d\n%s", names[i], c, logs[i].String())
			}
			if !strings.Contains(logs[i].String(), "stopped") {
				t.Errorf("agent %s did not log its clean stop:\n%s", names[i], logs[i].String())
			}
		}
	}()

	c := testClient(t, b.URL(), "controller")
	online := watch(t, c, presenceTopics("street/hearth", names))
	seen := map[string]bool{}
	for len(seen) < len(names) {
		m := waitFor(t, online, func(m paho.Message) bool { return strings.Contains(string(m.Payload()), `"online"`) }, "presence")
		seen[m.Topic()] = true
	}
	// Round r0 (--run-id) runs at start; then one per command.
	for _, round := range []string{"", `"r1"`, `2`} {
		id := strings.Trim(round, `"`)
		if round == "" {
			id = "r0"
		}
		var topics []string
		for _, n := range names {
			topics = append(topics, topic.ResultTopic("street/hearth", id, n))
		}
		results := watch(t, c, topics)
		if round != "" {
			// Malformed commands are ignored with a log line.
			publish(t, c, "street/hearth/cmd", `{"round": "a/b"}`)
			publish(t, c, "street/hearth/cmd", `not json`)
			publish(t, c, "street/hearth/cmd", `{"round": `+round+`}`)
		}
		reps := make([]daemon.RoundResult, len(names))
		for i := range names {
			m := waitFor(t, results, func(paho.Message) bool { return true }, "result of round "+id)
			if err := json.Unmarshal(m.Payload(), &reps[i]); err != nil {
				t.Fatal(err)
			}
		}
		if reps[0].Round != id {
			t.Errorf("round %q, want %q", reps[0].Round, id)
		}
		checkRound(t, want, reps)
	}
	if s := logs[0].String(); strings.Count(s, "command ignored") != 4 {
		t.Errorf("agent a0 did not log the four malformed commands:\n%s", s)
	}
}

// testClient connects a plain MQTT client, for the tests' own
// subscriptions and publications.
func testClient(t *testing.T, url, id string) paho.Client {
	t.Helper()
	return testClientAs(t, url, id, "", "")
}

func testClientAs(t *testing.T, url, id, user, password string) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetUsername(user).SetPassword(password).
		SetCleanSession(true).SetProtocolVersion(4).SetConnectTimeout(5 * time.Second)
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("test client %s: connect: %v", id, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// watch subscribes to each topic (one by one: a wildcard trips a data
// race in mochi v2.7.9's retained index) and returns what arrives.
func watch(t *testing.T, c paho.Client, topics []string) chan paho.Message {
	t.Helper()
	ch := make(chan paho.Message, 1024)
	for _, tp := range topics {
		tok := c.Subscribe(tp, 1, func(_ paho.Client, m paho.Message) {
			select {
			case ch <- m:
			default:
			}
		})
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", tp, tok.Error())
		}
	}
	return ch
}

func waitFor(t *testing.T, ch chan paho.Message, ok func(paho.Message) bool, what string) paho.Message {
	t.Helper()
	timeout := time.After(45 * time.Second)
	for {
		select {
		case m := <-ch:
			if ok(m) {
				return m
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func publish(t *testing.T, c paho.Client, tp, payload string) {
	t.Helper()
	tok := c.Publish(tp, 1, false, payload)
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish %s: %v", tp, tok.Error())
	}
}

func presenceTopics(prefix string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, prefix+"/presence/"+n)
	}
	return out
}

func TestRunUsage(t *testing.T) {
	path := genInstance(t, "random", "agents=2", "vars=2", "domain=2")
	base := []string{"run", "--instance", path, "--broker", "tcp://127.0.0.1:1"}
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no instance", []string{"run", "--agent", "a0", "--broker", "tcp://x:1"}, "--instance"},
		{"no agent", base, "--agent"},
		{"no broker", []string{"run", "--instance", path, "--agent", "a0"}, "--broker"},
		{"once without run id", append(base, "--agent", "a0", "--once"), "--run-id"},
		{"bad run id", append(base, "--agent", "a0", "--run-id", "a/b"), "--run-id"},
		{"long run id", append(base, "--agent", "a0", "--run-id", strings.Repeat("x", 120)), "longer"},
		{"positional", append(base, "--agent", "a0", "extra"), "unexpected argument"},
		{"unknown agent", append(base, "--agent", "zz"), `no agent "zz" (agents: a0, a1)`},
		{"global none", append(base, "--agent", "a0", "--global", "none"), "--global none"},
		{"unknown global", append(base, "--agent", "a0", "--global", "x"), "unknown --global"},
		{"bad attempts", append(base, "--agent", "a0", "--attempts", "0"), "--attempts"},
		{"bad log level", append(base, "--agent", "a0", "--log-level", "loud"), "--log-level"},
		{"bad prefix", append(base, "--agent", "a0", "--prefix", "a/+"), "--prefix"},
		{"ca without TLS", append(base, "--agent", "a0", "--ca", "x.pem"), "TLS broker URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb syncBuffer
			if code := run(context.Background(), tc.args, &out, &errb); code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, errb.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q: %s", tc.stderr, errb.String())
			}
		})
	}
}

// TestRunUnreachableBroker: --once against a broker that is not there
// ends with the solver's exit code when --timeout expires, not a hang.
func TestRunUnreachableBroker(t *testing.T) {
	path := genInstance(t, "random", "agents=2", "vars=2", "domain=2")
	var out, errb syncBuffer
	args := []string{"run", "--insecure", "--instance", path, "--agent", "a0", "--broker", "tcp://127.0.0.1:1", "--once", "--run-id", "r", "--timeout", "300ms", "--log-level", "error"}
	if code := run(context.Background(), args, &out, &errb); code != exitFailed {
		t.Fatalf("exit %d, want %d: %s", code, exitFailed, errb.String())
	}
	if !strings.Contains(errb.String(), "round r") {
		t.Errorf("stderr: %s", errb.String())
	}
}
