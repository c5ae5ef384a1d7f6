// Package mosquitto runs Debian's Mosquitto broker for integration tests:
// on a free loopback port, with optional users and ACL file, optional
// bridge configuration, and persistence off, so that a restart forgets
// everything as a crash would. Without mosquitto a test is skipped on a
// developer machine and fails in CI (CI set), where scripts/test installs
// it, so that a missing install can never turn a test green.
package mosquitto

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options configure a broker.
type Options struct {
	// Users maps user names to passwords. When set, anonymous clients
	// are refused and every user's client id is its name
	// (use_username_as_clientid, as mqtt/README.md recommends).
	Users map[string]string
	// ACL is the acl_file's text (e.g. broker.MosquittoACL); with Users.
	ACL string
	// Extra is appended to the configuration, e.g. a bridge.
	Extra string
}

// Broker is a running (or stopped) mosquitto.
type Broker struct {
	t    testing.TB
	bin  string
	conf string
	// Port is the loopback port it listens on, the same across restarts.
	Port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	logs   *sink
}

// Find returns the path of the mosquitto binary, which Debian installs in
// /usr/sbin (often not on a user's PATH) and mosquitto_passwd, skipping
// or failing t when they are absent.
func Find(t testing.TB) (broker, passwd string) {
	t.Helper()
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin"} {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p
			}
		}
		return ""
	}
	broker, passwd = find("mosquitto"), find("mosquitto_passwd")
	if broker == "" || passwd == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("mosquitto is not installed: scripts/test installs it (apt-get install mosquitto)")
		}
		t.Skip("mosquitto is not installed (apt-get install mosquitto)")
	}
	return broker, passwd
}

// FreePort returns a loopback port nobody listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start writes the configuration into a fresh folder, starts mosquitto and
// waits until it accepts connections. The broker is killed when t ends.
func Start(t testing.TB, o Options) *Broker {
	t.Helper()
	bin, passwd := Find(t)
	// mosquitto started as root drops to its own user, which must read
	// its files: t.TempDir's private parent would forbid it.
	dir, err := os.MkdirTemp("", "hearth-mosquitto-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &Broker{t: t, bin: bin, Port: FreePort(t), conf: filepath.Join(dir, "mosquitto.conf"), logs: &sink{}}
	var conf bytes.Buffer
	fmt.Fprintf(&conf, "listener %d 127.0.0.1\nset_tcp_nodelay true\npersistence false\nmax_queued_messages 100000\nmax_packet_size 1048576\n", b.Port)
	if len(o.Users) == 0 {
		conf.WriteString("allow_anonymous true\n")
	} else {
		pw := filepath.Join(dir, "passwd")
		names := make([]string, 0, len(o.Users))
		for u := range o.Users {
			names = append(names, u)
		}
		sort.Strings(names)
		for i, u := range names {
			args := []string{"-b", pw, u, o.Users[u]}
			if i == 0 {
				args = append([]string{"-c"}, args...)
			}
			if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
				t.Fatalf("mosquitto_passwd: %v: %s", err, out)
			}
		}
		if err := os.Chmod(pw, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&conf, "allow_anonymous false\npassword_file %s\nuse_username_as_clientid true\n", pw)
		if o.ACL != "" {
			acl := filepath.Join(dir, "acl")
			if err := os.WriteFile(acl, []byte(o.ACL), 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&conf, "acl_file %s\n", acl)
		}
	}
	conf.WriteString(o.Extra)
	if err := os.WriteFile(b.conf, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			t.Logf("mosquitto on port %d:\n%s", b.Port, b.Logs())
		}
	})
	b.Restart()
	return b
}

// URL is the broker's address for paho and hearth's --broker.
func (b *Broker) URL() string { return fmt.Sprintf("tcp://127.0.0.1:%d", b.Port) }

// Addr is host:port.
func (b *Broker) Addr() string { return fmt.Sprintf("127.0.0.1:%d", b.Port) }

// Restart starts the broker again (it must be stopped) on the same port
// and configuration, and waits until it accepts connections. With
// persistence off it knows no session, subscription or retained message.
func (b *Broker) Restart() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		b.t.Fatal("mosquitto: Restart while running")
	}
	cmd := exec.Command(b.bin, "-c", b.conf)
	cmd.Stdout, cmd.Stderr = b.logs, b.logs
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	b.cmd, b.exited = cmd, exited
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			b.t.Fatalf("mosquitto exited:\n%s", b.Logs())
		default:
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto did not listen on %s:\n%s", b.Addr(), b.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the broker (SIGKILL: a crash, not a clean shutdown) and
// waits for it to exit. Stopping a stopped broker does nothing.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGCONT) // a paused process dies too
	_ = b.cmd.Process.Kill()
	<-b.exited
	b.cmd = nil
}

// Pause freezes the broker (SIGSTOP): it keeps its connections but
// neither reads nor routes anything until it is stopped.
func (b *Broker) Pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		_ = b.cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Logs returns what mosquitto printed so far.
func (b *Broker) Logs() string { return b.logs.String() }

// sink collects output written from exec's goroutines.
type sink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
