package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// keygenAll runs `hearth keygen` for homes and controllers in dir and
// writes keys.toml from the lines it prints; it returns that file.
func keygenAll(t *testing.T, dir string, homes, controllers []string) string {
	t.Helper()
	var toml strings.Builder
	for _, g := range []struct {
		flag, table string
		names       []string
	}{{"--home", "keys", homes}, {"--controller", "controllers", controllers}} {
		toml.WriteString("[" + g.table + "]\n")
		for _, n := range g.names {
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"keygen", g.flag, n, "-o", filepath.Join(dir, n+".key")}, &out, &errb); code != exitOK {
				t.Fatalf("keygen %s: exit %d: %s", n, code, errb.String())
			}
			if !strings.Contains(out.String(), "["+g.table+"]") {
				t.Fatalf("keygen %s does not say where the line goes: %s", n, out.String())
			}
			toml.WriteString(out.String())
		}
	}
	path := filepath.Join(dir, "keys.toml")
	if err := os.WriteFile(path, []byte(toml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKeygen(t *testing.T) {
	dir := t.TempDir()
	keys := keygenAll(t, dir, []string{"alder"}, []string{"ctl"})
	st, err := os.Stat(filepath.Join(dir, "alder.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("alder.key: %v, %v", st, err)
	}
	s, err := sign.LoadKey(filepath.Join(dir, "alder.key"), "alder")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(keys)
	if !strings.Contains(string(b), `alder = "`+sign.FormatPublic(s.Public())+`"`) {
		t.Fatalf("keys.toml lacks alder's public key:\n%s", b)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keygen", "--home", "alder", "-o", filepath.Join(dir, "alder.key")}, "exists"},
		{[]string{"keygen"}, "--home NAME or --controller NAME"},
		{[]string{"keygen", "--home", "a/b"}, "a/b"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestRunRefuses: `hearth run` does not start unsigned, nor signed with
// the wrong key, nor with a broker off this machine without TLS and
// credentials, unless --insecure says so.
func TestRunRefuses(t *testing.T) {
	path := genInstance(t, "random", "agents=2", "vars=2", "domain=2")
	dir := t.TempDir()
	keys := keygenAll(t, dir, agentNames(2), []string{"ctl"})
	signed := []string{"--keys", keys, "--sign-key", filepath.Join(dir, "a0.key")}
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--instance", path, "--agent", "a0", "--once", "--run-id", "r", "--timeout", "300ms"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unsigned", []string{"--broker", "tcp://127.0.0.1:1"}, "no keys"},
		{"no private key", []string{"--broker", "tcp://127.0.0.1:1", "--keys", keys}, "--sign-key FILE"},
		{"another home's key", []string{"--broker", "tcp://127.0.0.1:1", "--keys", keys, "--sign-key", filepath.Join(dir, "a1.key")}, `not "a0"'s`},
		{"key without public keys", []string{"--broker", "tcp://127.0.0.1:1", "--sign-key", filepath.Join(dir, "a0.key")}, "no public keys"},
		{"plain TCP off the machine", append([]string{"--broker", "tcp://192.0.2.1:1883"}, signed...), "TLS"},
		{"no credentials", append([]string{"--broker", "ssl://192.0.2.1:8883"}, signed...), "credentials"},
		{"two passwords", append([]string{"--broker", "ssl://192.0.2.1:8883", "--password", "x", "--password-file", pwFile}, signed...), "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb syncBuffer
			if code := run(context.Background(), append(slicesClone(base), tc.args...), &out, &errb); code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, errb.String())
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr lacks %q: %s", tc.want, errb.String())
			}
		})
	}
	// With TLS and credentials a remote broker is accepted (the run then
	// fails to reach it: exit 3, not 2), as is --insecure.
	for _, args := range [][]string{
		append([]string{"--broker", "ssl://192.0.2.1:8883", "--username", "a0", "--password-file", pwFile}, signed...),
		{"--broker", "tcp://192.0.2.1:1883", "--insecure"},
	} {
		var out, errb syncBuffer
		if code := run(context.Background(), append(slicesClone(base), append(args, "--log-level", "error")...), &out, &errb); code != exitFailed {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitFailed, errb.String())
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestRunSigned runs three signed `hearth run` agents, each with its own
// private key and the others' public keys, with the decomposition
// reformulation (its pseudo-agents sign as their home). A bare unsigned
// command (what mosquitto_pub sends) is dropped; `hearth round` with the
// controller's key starts a round; a home's key cannot; every result is
// signed by its home, and the answer is the central solver's.
func TestRunSigned(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=4", "domain=3", "--seed", "7")
	flags := []string{"--global", "dpop", "--reform", "decomposition"}
	want := solveJSON(t, append([]string{path}, flags...)...)
	b := startEmbedded(t)
	dir := t.TempDir()
	names := agentNames(3)
	keys := keygenAll(t, dir, names, []string{"ctl"})
	const prefix = "street/hearth"
	ctx, stop := context.WithCancel(testCtx(t, 90*time.Second))
	logs := make([]syncBuffer, len(names))
	var wg sync.WaitGroup
	for i, a := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"run", "--instance", path, "--agent", a, "--broker", b.URL(), "--prefix", prefix,
				"--keys", keys, "--sign-key", filepath.Join(dir, a+".key")}, append(flags, fastFlags...)...)
			if code := run(ctx, args, io.Discard, &logs[i]); code != exitOK {
				t.Errorf("agent %s: exit %d\n%s", a, code, logs[i].String())
			}
		}()
	}
	defer func() {
		stop()
		wg.Wait()
	}()
	c := testClient(t, b.URL(), "watcher")
	online := watch(t, c, presenceTopics(prefix, names))
	seen := map[string]bool{}
	for len(seen) < len(names) {
		m := waitFor(t, online, func(m paho.Message) bool { return strings.Contains(string(m.Payload()), `"online"`) }, "presence")
		seen[m.Topic()] = true
	}
	results := func(id string) chan paho.Message {
		var topics []string
		for _, n := range names {
			topics = append(topics, topic.ResultTopic(prefix, id, n))
		}
		return watch(t, c, topics)
	}
	forged := results("r1")
	publish(t, c, prefix+"/cmd", `{"round": "r1"}`)
	round := func(id, key string) (int, string) {
		var out, errb syncBuffer
		code := run(ctx, []string{"round", id, "--broker", b.URL(), "--prefix", prefix, "--keys", keys, "--sign-key", filepath.Join(dir, key)}, &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := round("r3", "a0.key"); code != exitUsage || !strings.Contains(out, "not in the neighbourhood's [controllers]") {
		t.Fatalf("hearth round with a home's key: exit %d: %s", code, out)
	}
	got := results("r2")
	if code, out := round("r2", "ctl.key"); code != exitOK || !strings.Contains(out, "signed by ctl") {
		t.Fatalf("hearth round: exit %d: %s", code, out)
	}
	pub, err := (&securityOptions{signKey: filepath.Join(dir, "ctl.key")}).keyring(mustKeys(t, keys), "")
	if err != nil {
		t.Fatal(err)
	}
	reps := make([]daemon.RoundResult, len(names))
	for i := range names {
		m := waitFor(t, got, func(paho.Message) bool { return true }, "result of round r2")
		home := topic.Parse(prefix, m.Topic()).Agent
		opened, err := pub.Open(m.Topic(), m.Payload(), func(s string) bool { return s == home })
		if err != nil {
			t.Fatalf("result on %s: %v", m.Topic(), err)
		}
		if err := json.Unmarshal(opened.Content, &reps[i]); err != nil {
			t.Fatal(err)
		}
	}
	checkRound(t, want, reps)
	select {
	case m := <-forged:
		t.Fatalf("the unsigned command ran round r1: %s", m.Payload())
	default:
	}
	if s := logs[0].String(); !strings.Contains(s, "reason=unsigned") {
		t.Errorf("a0 did not log the unsigned command it dropped:\n%s", s)
	}
}

// mustKeys reads keys.toml as --keys does.
func mustKeys(t *testing.T, path string) config.Keys {
	t.Helper()
	k, err := (&securityOptions{keysFile: path}).publicKeys(config.Keys{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
