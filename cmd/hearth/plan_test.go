package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/evcc"
)

const evccExample = "../../examples/evcc/request.json"

func TestPlanCommand(t *testing.T) {
	bad := writeFile(t, "bad.json", `{"batteries":[{"s_min":0}],"time_series":{"dt":[3600],"gt":[1],"ft":[0],"p_N":[0.0003],"p_E":[0]}}`)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"example", []string{"plan", evccExample}, exitOK, `"status": "Optimal"`, ""},
		{"no file", []string{"plan"}, exitUsage, "", "want exactly one"},
		{"missing file", []string{"plan", "nope.json"}, exitUsage, "", "nope.json"},
		{"bad request", []string{"plan", bad}, exitUsage, "", "batteries.0.s_max"},
		{"bad gap", []string{"plan", "--gap", "1.5", evccExample}, exitUsage, "", "--gap 1.5"},
		{"coarse gap", []string{"plan", "--gap", "0.05", evccExample}, exitOK, `"status": "Optimal"`, ""},
		{"help devices", []string{"help", "devices"}, exitOK, "home_battery", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s", code, tc.code, out.String(), errb.String())
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"plan", evccExample}, &out, &errb); code != exitOK {
		t.Fatal(errb.String())
	}
	var resp evcc.Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil || len(resp.Batteries) != 2 {
		t.Fatalf("response %v: %s", err, out.String())
	}
}

// TestServeCommand: hearth serve answers the health probe and a request,
// and stops when its context ends.
func TestServeCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	e := &env{stdout: &bytes.Buffer{}, stderr: &errb, log: nil}
	e.log = newTestLogger()
	done := make(chan int, 1)
	go func() { done <- serveEvcc(ctx, e, ln, energy.Options{}) }()
	url := "http://" + ln.Addr().String()
	resp, err := http.Get(url + "/optimize/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Post(url+"/optimize/charge-schedule", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad request: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func newTestLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
