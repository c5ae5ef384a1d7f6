package mqtt

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseCommand(t *testing.T) {
	at := time.Date(2026, 11, 22, 16, 30, 0, 0, time.FixedZone("", 3600))
	tests := []struct {
		in, want, err string
		at            time.Time
		from          string
	}{
		{in: `{"round": "r1"}`, want: "r1", from: "command"},
		{in: `{"round": 42}`, want: "42", from: "command"},
		{in: `{"round": "r1", "note": "from the scheduler"}`, want: "r1", from: "command"},
		{in: `{"round": 1.5e3}`, want: "1.5e3", from: "command"},
		{in: `{"round": "alder-1", "at": "2026-11-22T16:30:00+01:00", "from": "alder"}`, want: "alder-1", at: at, from: `home "alder"`},
		{in: `{"round": "r", "at": "16:30"}`, err: "RFC 3339"},
		{in: `{"round": ""}`, err: "empty"},
		{in: `{"round": "a/b"}`, err: "invalid name"},
		{in: `{"round": "$SYS"}`, err: "'$'"},
		{in: `{"round": "home"}`, err: "reserved"},
		{in: `{"round": "cmd"}`, err: "reserved"},
		{in: `{"round": true}`, err: "want"},
		{in: `{"round": null}`, err: "empty"},
		{in: `{}`, err: "want"},
		{in: `{"round": "r"} {}`, err: "trailing"},
		{in: `[1]`, err: "command"},
		{in: ``, err: "command"},
		{in: `{"round": "` + strings.Repeat("x", 200) + `"}`, err: "longer"},
		{in: strings.Repeat(" ", 5000), err: "bytes"},
	}
	for _, tc := range tests {
		got, err := ParseCommand([]byte(tc.in))
		switch {
		case tc.err == "" && (err != nil || got.ID != tc.want || !got.At.Equal(tc.at) || got.From != tc.from):
			t.Errorf("%.40q: got %+v, %v; want %q at %v from %q", tc.in, got, err, tc.want, tc.at, tc.from)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%.40q: got %+v, %v; want an error with %q", tc.in, got, err, tc.err)
		}
	}
}

// FuzzParseCommand: any payload gives a valid round id or an error,
// never a panic.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{`{"round": "r1"}`, `{"round": 7}`, `{"round": "a/b"}`, `{}`, `x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ParseCommand(b)
		if err == nil && CheckRoundID(req.ID) != nil {
			t.Fatalf("%q gave the invalid round id %q", b, req.ID)
		}
	})
}

// TestControlQueue: which commands and requests a home queues, and the
// order it runs them in. An undated retained command is old news at the
// process's first connection; a dated one is news until it is older than
// the round time-out; one from the future is refused; a round queued or
// taken is not queued again; the queue runs rounds by creation time, then
// id, whatever their order of arrival, each once its settling time has
// passed.
func TestControlQueue(t *testing.T) {
	c := NewControl(Config{Prefix: "hearth"}, "alder", nil, true)
	c.SetHomes([]string{"alder", "birch"}, []string{"birch"})
	c.SetTiming(10*time.Minute, time.Hour) // nothing becomes eligible by itself
	now := time.Now()
	cmd := func(id string, created time.Time) string {
		b, err := EncodeCommand(Request{ID: id, Created: created}, "birch")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	steps := []struct {
		conn     int
		topic    string
		payload  string
		retained bool
		news     bool
	}{
		{1, "hearth/cmd/birch", `{"round": "b1", "from": "birch"}`, true, false},
		{1, "hearth/cmd/birch", cmd("b2", now.Add(-time.Minute)), true, true},
		{1, "hearth/cmd", `{"round": "c1"}`, false, true},
		{1, "hearth/cmd", cmd("old", now.Add(-11*time.Minute)), true, false},
		{1, "hearth/cmd", cmd("future", now.Add(2*time.Hour)), false, false},
		{1, "hearth/cmd/birch", `{"round": "a/b"}`, false, false},
		// After a round, the retained copy comes again.
		{2, "hearth/cmd/birch", cmd("b2", now.Add(-time.Minute)), true, false},
		// A burst, out of order: m before a (created earlier), a
		// before z (same time, by id).
		{2, "hearth/cmd", cmd("z", now.Add(time.Second)), false, true},
		{2, "hearth/cmd", cmd("a", now.Add(time.Second)), false, true},
		{2, "hearth/cmd", cmd("m", now.Add(time.Second-time.Millisecond)), false, true},
	}
	for i, s := range steps {
		c.mu.Lock()
		c.conns = s.conn
		before := len(c.queue)
		c.mu.Unlock()
		c.onCommand(s.topic, []byte(s.payload), s.retained, time.Time{})
		c.mu.Lock()
		news := len(c.queue) > before
		c.mu.Unlock()
		if news != s.news {
			t.Errorf("step %d (%s %s retained=%v): queued %v, want %v", i, s.topic, s.payload, s.retained, news, s.news)
		}
	}
	if _, ok, wait := c.Next(now); ok || wait <= 0 {
		t.Fatalf("a round taken before its settling time (wait %v)", wait)
	}
	var order []string
	for {
		req, ok, _ := c.Next(now.Add(2 * time.Hour))
		if !ok {
			break
		}
		order = append(order, req.ID)
	}
	// c1 took its arrival time, just after now.
	if want := []string{"b2", "c1", "m", "a", "z"}; !slices.Equal(order, want) {
		t.Errorf("rounds taken in the order %v, want %v", order, want)
	}
	c.onCommand("hearth/cmd", []byte(cmd("a", now)), false, time.Time{})
	if _, ok, wait := c.Next(now.Add(2 * time.Hour)); ok || wait != 0 {
		t.Error("a round taken before was queued again")
	}

	// Another home in a round this one does not know: the round is
	// queued first, and a command for it later gives it its details.
	c.Enqueue(Request{ID: "later", Created: now})
	c.handle("hearth/presence/birch", []byte(`{"v":1,"agent":"birch","state":"online","run":"x9.retry2"}`), true)
	at := now.Add(time.Hour).Truncate(time.Second)
	b, _ := EncodeCommand(Request{ID: "x9", At: at, Created: now.Add(time.Second)}, "")
	c.onCommand("hearth/cmd", b, false, time.Time{})
	req, ok, _ := c.Next(now.Add(2 * time.Hour))
	if !ok || req.ID != "x9" || !req.At.Equal(at) {
		t.Errorf("took %+v, want x9 at %v", req, at)
	}
	if req, _, _ := c.Next(now.Add(2 * time.Hour)); req.ID != "later" {
		t.Errorf("took %+v, want later", req)
	}
	c.handle("hearth/presence/birch", []byte(`{"v":1,"agent":"birch","state":"offline","run":"y"}`), true)
	if _, ok, wait := c.Next(now.Add(2 * time.Hour)); ok || wait != 0 {
		t.Error("an offline home's round queued")
	}
}

// TestControlDuplicate: another process's presence on the home's own
// topic. At the first connection a retained one proves nothing (a
// previous incarnation's); after it, or live, it does, and the newer of
// the two processes is told to stop.
func TestControlDuplicate(t *testing.T) {
	me := Identity{Client: "me", Since: 2000}
	pres := func(client string, since int64) []byte {
		return presence{V: presenceVersion, Agent: "alder", State: "offline", Client: client, Since: since}.encode()
	}
	for _, tc := range []struct {
		name     string
		conn     int
		msg      []byte
		retained bool
		conflict bool
	}{
		{"own", 2, pres("me", 2000), false, false},
		{"previous incarnation", 1, pres("old", 1000), true, false},
		{"older process, live", 1, pres("old", 1000), false, true},
		{"older process after the first connection", 2, pres("old", 1000), true, true},
		{"newer process", 2, pres("new", 3000), true, false},
		{"same start, client decides", 2, pres("ma", 2000), true, true},
		{"no client (an older build)", 2, []byte(`{"v":1,"agent":"alder","state":"online"}`), true, false},
		{"junk", 2, []byte("\x00junk"), true, false},
	} {
		c := NewControl(Config{Prefix: "hearth", Identity: me}, "alder", nil, true)
		c.conns = tc.conn
		c.handle("hearth/presence/alder", tc.msg, tc.retained)
		select {
		case err := <-c.Conflict():
			if !tc.conflict {
				t.Errorf("%s: conflict %v", tc.name, err)
			} else if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "process old") && !strings.Contains(err.Error(), "process ma") {
				t.Errorf("%s: %v", tc.name, err)
			}
		default:
			if tc.conflict {
				t.Errorf("%s: no conflict", tc.name)
			}
		}
	}
}

func TestRoundOfRun(t *testing.T) {
	for _, tc := range []struct{ run, round string }{
		{"r", "r"}, {"r.retry1", "r"}, {"r.retry12", "r"}, {"r.retry0", "r.retry0"}, {"r.retry01", "r.retry01"},
		{"r.retryx", "r.retryx"}, {"a.retry1.retry2", "a.retry1"}, {".retry3", ""},
	} {
		if got := RoundOfRun(tc.run); got != tc.round {
			t.Errorf("RoundOfRun(%q) = %q, want %q", tc.run, got, tc.round)
		}
		if tc.round == "r" && RoundOfRun(AttemptRun("r", 4)) != "r" {
			t.Error("AttemptRun and RoundOfRun disagree")
		}
	}
}

// FuzzControlHandle: any message on any topic leaves Control's queue
// valid — round ids that name rounds, in the order every home takes them
// — and never panics; a command that parses survives EncodeCommand.
func FuzzControlHandle(f *testing.F) {
	for _, s := range []struct {
		tp, b string
	}{
		{"hearth/cmd", `{"round": "r1", "created": "2026-11-26T10:00:00.5Z"}`},
		{"hearth/cmd/birch", `{"round": 7, "at": "2026-11-26T10:00:00+01:00", "from": "birch"}`},
		{"hearth/presence/birch", `{"v":1,"agent":"birch","state":"online","run":"r2.retry1"}`},
		{"hearth/presence/alder", `{"v":1,"agent":"alder","state":"offline","client":"x","since":1}`},
		{"hearth/r/status/birch", `{}`},
	} {
		f.Add(s.tp, []byte(s.b), true)
	}
	f.Fuzz(func(t *testing.T, tp string, b []byte, retained bool) {
		c := NewControl(Config{Prefix: "hearth", Identity: Identity{Client: "me", Since: 1}}, "alder", nil, true)
		c.SetHomes([]string{"alder", "birch"}, []string{"birch"})
		c.SetTiming(100*365*24*time.Hour, 0)
		c.conns = 2
		c.handle(tp, b, retained)
		for i, q := range c.queue {
			if err := CheckRoundID(q.req.ID); err != nil {
				t.Fatalf("queued %q: %v", q.req.ID, err)
			}
			if i > 0 && q.req.before(c.queue[i-1].req) {
				t.Fatalf("queue out of order: %+v", c.queue)
			}
		}
		req, err := ParseCommand(b)
		if err != nil {
			return
		}
		enc, err := EncodeCommand(req, "")
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseCommand(enc)
		if err != nil || back.ID != req.ID || !back.Created.Equal(req.Created) || !back.At.Equal(req.At.Truncate(time.Second)) && !back.At.Equal(req.At) {
			t.Fatalf("%q encodes as %s: %+v, %v; want %+v", b, enc, back, err, req)
		}
	})
}
