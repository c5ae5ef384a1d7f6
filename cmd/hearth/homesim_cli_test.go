package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/homesim"
)

// TestHomeSimUsage: bad flags are usage errors that say what is wrong.
func TestHomeSimUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--all"}, "-c FILE is required"},
		{[]string{"-c", exampleTOML}, "give --home NAME or --all"},
		{[]string{"-c", exampleTOML, "--all", "--home", "alder"}, "give --home NAME or --all"},
		{[]string{"-c", exampleTOML, "--home", "elm"}, `no home "elm" (homes: alder, birch, cedar, dogwood)`},
		{[]string{"-c", exampleTOML, "--all", "--now", "tomorrow"}, "--now"},
		{[]string{"-c", exampleTOML, "--all", "--now", "17:00", "--until", "16:00"}, "would end"},
		{[]string{"-c", exampleTOML, "--all", "--duration", "1h", "--until", "18:00"}, "not both"},
		{[]string{"-c", exampleTOML, "--all", "--speed", "0"}, "--speed"},
		{[]string{"-c", exampleTOML, "--all", "--noise", "2"}, "--noise"},
		{[]string{"-c", exampleTOML, "--all", "--car", "ev=7-8"}, "LEAVE-RETURN"},
		{[]string{"-c", exampleTOML, "--all", "--car", "tesla=07:00-17:00"}, `no simulated home has a device "tesla"`},
		{[]string{"-c", exampleTOML, "--all", "--epoch", "now"}, "--epoch"},
		{[]string{"-c", exampleTOML, "--all", "--broker", "tcp://127.0.0.1:1", "--serve", "127.0.0.1:0"}, "--serve starts a broker"},
		{[]string{"-c", exampleTOML, "--all", "extra"}, "unexpected arguments"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"home-sim"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", c.args, code, errb.String(), exitUsage, c.want)
		}
	}
}

// TestHomeSimIdle runs the example street for two simulated hours over
// its embedded broker with nobody sending commands: every device idles,
// the EVs stay plugged in (the horizon is their time at home), and the
// JSON report carries each home's trace.
func TestHomeSimIdle(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"home-sim", "-c", exampleTOML, "--all", "--now", "2026-11-26T17:00:00Z",
		"--speed", "50000", "--duration", "2h", "--noise", "0", "--json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var d homesim.Day
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Homes) != 4 || d.Complete || d.Homes[0].Trace.To != 2 {
		t.Fatalf("%d homes, complete %v", len(d.Homes), d.Complete)
	}
	for _, h := range d.Homes {
		for s, st := range h.Trace.Slots[:2] {
			for _, ds := range st.Devices {
				if ds.InKWh != 0 || ds.OutKWh != 0 {
					t.Errorf("%s slot %d: %s moved %g/%g kWh without a command", h.Home, s, ds.Device, ds.InKWh, ds.OutKWh)
				}
				if ds.Car && math.Abs(ds.PluggedS-3600) > 1e-6 {
					t.Errorf("%s slot %d: %s plugged in %g s of 3600", h.Home, s, ds.Device, ds.PluggedS)
				}
			}
		}
	}
	// alder: 0.4 kW of background for two hours at 0.45 $/kWh.
	if a := d.Homes[0]; a.Home != "alder" || a.Bill < 0.36-1e-9 || a.Bill > 0.36+1e-9 {
		t.Errorf("alder pays %.4f, want 0.36", a.Bill)
	}
}
