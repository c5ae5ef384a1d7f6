package mosquitto

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestRestart: the broker listens, dies on Stop, and listens again on the
// same port after Restart; Pause freezes it without closing the port.
func TestRestart(t *testing.T) {
	b := Start(t, Options{Users: map[string]string{"home-1": "pw"}, ACL: "topic read x\n"})
	if !strings.HasPrefix(b.URL(), "tcp://127.0.0.1:") || b.Port == 0 {
		t.Fatalf("url %s", b.URL())
	}
	dial := func() error {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	b.Pause()
	if err := dial(); err != nil {
		t.Errorf("a paused broker closed its port: %v", err)
	}
	b.Stop()
	if dial() == nil {
		t.Error("the port is still open after Stop")
	}
	b.Stop() // a no-op
	b.Restart()
	if err := dial(); err != nil {
		t.Errorf("after Restart: %v", err)
	}
	if !strings.Contains(b.Logs(), "mosquitto version") {
		t.Errorf("logs: %s", b.Logs())
	}
}
