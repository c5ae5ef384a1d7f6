package mqtt

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// lookMosquitto finds Debian's mosquitto and mosquitto_passwd (the broker
// lives in /usr/sbin, often not on a user's PATH). It skips the test when
// they are absent, unless CI is set.
func lookMosquitto(t *testing.T) (broker, passwd string) {
	t.Helper()
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin"} {
			if p := filepath.Join(dir, name); fileExists(p) {
				return p
			}
		}
		return ""
	}
	broker, passwd = find("mosquitto"), find("mosquitto_passwd")
	if broker == "" || passwd == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("mosquitto is not installed (apt-get install mosquitto)")
		}
		t.Skip("mosquitto is not installed")
	}
	return broker, passwd
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startMosquitto runs mosquitto on a free loopback port with password
// authentication (user u's password is pw-u) and acl as its acl_file, and
// returns its URL.
func startMosquitto(t *testing.T, users []string, acl string) string {
	t.Helper()
	bin, passwd := lookMosquitto(t)
	// mosquitto started as root drops to its own user: it must be able
	// to read its files, which t.TempDir's private parent would forbid.
	dir, err := os.MkdirTemp("", "hearth-mosquitto-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "passwd")
	for i, u := range users {
		args := []string{"-b", pw, u, "pw-" + u}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v: %s", err, out)
		}
	}
	aclFile := filepath.Join(dir, "acl")
	port := freePort(t)
	conf := filepath.Join(dir, "mosquitto.conf")
	files := map[string]string{
		aclFile: acl,
		conf: fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous false\npassword_file %s\nacl_file %s\n"+
			"use_username_as_clientid true\nset_tcp_nodelay true\npersistence false\nmax_queued_messages 100000\nmax_packet_size 1048576\n", port, pw, aclFile),
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(pw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := &logSink{}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	logs := func() string {
		out.mu.Lock()
		defer out.mu.Unlock()
		return out.buf.String()
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("mosquitto:\n%s", logs())
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("mosquitto exited: %s", logs())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mosquitto did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "tcp://" + addr
}

// TestMosquitto runs the end-to-end DPOP test against Mosquitto with the
// documented ACL file, every home on its own credentials, then checks the
// ACL's rules one by one.
func TestMosquitto(t *testing.T) {
	p := randomProblem(8, 4)
	names := AgentNames(p)
	// A controller, and a reader standing for Home Assistant's user,
	// whose rule is the administrator's (see mqtt/README.md).
	acl := broker.ACLOptions{Prefix: "hearth", Controllers: []string{"ctl"}}.MosquittoACL() +
		"user ha\ntopic read homeassistant/#\n"
	url := startMosquitto(t, append(slices.Clone(names), "ctl", "ha"), acl)
	want := simTruth(t, p, nil)
	cfg := GroupConfig{
		Config:      Config{Broker: Broker{URL: url}, Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)},
		Credentials: func(a string) (string, string) { return a, "pw-" + a },
	}
	got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAnswer(t, got, gr, want)

	checkMosquittoACL(t, url)
	checkMosquittoRunTopics(t, url)
}

// checkMosquittoRunTopics checks the ACL's rules for `hearth run`'s
// topics by what Mosquitto delivers: a2 publishes, as itself and as a0,
// on every kind of topic, the refused ones first; a1 (a home) and ha
// (Home Assistant) must receive exactly what the rules allow, in each
// publisher's order.
func checkMosquittoRunTopics(t *testing.T, url string) {
	t.Helper()
	subs := map[string][]string{
		"a1": {"hearth/cmd", "hearth/cmd/+", "hearth/+/result/+", "hearth/home/+/#", "homeassistant/#"},
		"ha": {"homeassistant/#"},
	}
	got := map[string]chan string{}
	for u, filters := range subs {
		c, err := rawClient(url, u, u, "pw-"+u, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(0)
		ch := make(chan string, 32)
		got[u] = ch
		for _, f := range filters {
			tok := c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) { ch <- m.Topic() })
			if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
				t.Fatal(tok.Error())
			}
		}
	}
	pubs := []struct {
		user, topic string
		allowed     bool
	}{
		{"a2", "hearth/cmd", false}, // only a controller starts rounds
		{"a2", "hearth/cmd/a0", false},
		{"a2", "hearth/r1/result/a0", false},
		{"a2", "hearth/home/a0/load", false},
		{"a2", "hearth/home/a0/plan/boiler", false},
		{"a2", "homeassistant/sensor/a0/a0_load/config", false},
		{"ctl", "hearth/cmd/a0", false},
		{"a2", "hearth/cmd/a2", true},
		{"a2", "hearth/r1/result/a2", true},
		{"a2", "hearth/home/a2/plan/boiler", true},
		{"a2", "hearth/home/a2/load", true},
		{"a2", "homeassistant/sensor/a2/a2_load/config", true},
		{"ctl", "hearth/cmd", true},
	}
	clients := map[string]paho.Client{}
	want := map[string][]string{}
	for _, p := range pubs {
		c := clients[p.user]
		if c == nil {
			var err error
			if c, err = rawClient(url, p.user, p.user, "pw-"+p.user, ""); err != nil {
				t.Fatal(err)
			}
			defer c.Disconnect(0)
			clients[p.user] = c
		}
		mustPublish(t, c, 1, p.topic, []byte(p.topic))
		if p.allowed {
			reader := "a1"
			if strings.HasPrefix(p.topic, "homeassistant/") {
				reader = "ha"
			}
			want[reader] = append(want[reader], p.topic)
		}
	}
	for u, topics := range want {
		var recv []string
		for len(recv) < len(topics) {
			select {
			case tp := <-got[u]:
				recv = append(recv, tp)
			case <-time.After(5 * time.Second):
				t.Fatalf("%s received %v, want %v", u, recv, topics)
			}
		}
		slices.Sort(recv)
		slices.Sort(topics)
		if !slices.Equal(recv, topics) {
			t.Errorf("%s received %v, want %v", u, recv, topics)
		}
	}
	// Refused ones were published before, so they would have come first.
	time.Sleep(100 * time.Millisecond)
	for u, ch := range got {
		select {
		case tp := <-ch:
			t.Errorf("%s received %s", u, tp)
		default:
		}
	}
}

// checkMosquittoACL checks the documented ACL itself. Mosquitto grants a
// 3.1.1 subscription it will not serve and drops a refused publication
// silently, so the test watches what is delivered: a0, subscribed to a1's
// inbox, gets nothing of it, and a1 gets nothing a0 published as a2.
func checkMosquittoACL(t *testing.T, url string) {
	t.Helper()
	clients := map[string]paho.Client{}
	got := map[string]chan string{}
	for _, u := range []string{"a0", "a1", "a2"} {
		c, err := rawClient(url, u, u, "pw-"+u, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(0)
		clients[u] = c
		ch := make(chan string, 16)
		got[u] = ch
		for _, f := range map[string][]string{
			"a0": {"hearth/x/inbox/a1/+", "hearth/x/inbox/a0/+"}, "a1": {"hearth/x/inbox/a1/+"},
		}[u] {
			tok := c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) { ch <- string(m.Payload()) })
			if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
				t.Fatal(tok.Error())
			}
		}
	}
	mustPublish(t, clients["a2"], 1, "hearth/x/inbox/a1/a2", []byte("to-a1"))
	mustPublish(t, clients["a2"], 1, "hearth/x/inbox/a0/a2", []byte("to-a0"))
	mustPublish(t, clients["a0"], 1, "hearth/x/inbox/a1/a2", []byte("forged"))
	mustPublish(t, clients["a0"], 1, "hearth/x/inbox/a1/a0", []byte("marker"))
	read := func(u string, n int) []string {
		var out []string
		for range n {
			select {
			case m := <-got[u]:
				out = append(out, m)
			case <-time.After(5 * time.Second):
				t.Fatalf("%s received only %v", u, out)
			}
		}
		return out
	}
	if m := read("a0", 1); m[0] != "to-a0" {
		t.Errorf("a0 received %v from another home's inbox", m)
	}
	if m := read("a1", 2); m[0] != "to-a1" || m[1] != "marker" {
		t.Errorf("a1 received %v, want [to-a1 marker]", m)
	}
	select {
	case m := <-got["a0"]:
		t.Errorf("a0 received %q", m)
	default:
	}
}
