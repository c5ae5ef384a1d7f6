package mqtt

import (
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

// fakeMessage is a paho.Message as the broker delivers it.
type fakeMessage struct {
	topic    string
	payload  string
	retained bool
}

func (m fakeMessage) Duplicate() bool   { return false }
func (m fakeMessage) Qos() byte         { return 1 }
func (m fakeMessage) Retained() bool    { return m.retained }
func (m fakeMessage) Topic() string     { return m.topic }
func (m fakeMessage) MessageID() uint16 { return 1 }
func (m fakeMessage) Payload() []byte   { return []byte(m.payload) }
func (m fakeMessage) Ack()              {}

// TestControlRequests: which commands and requests a home runs. A
// retained request is old news at the process's first connection, and
// after that news only when it is not the one last seen on its topic; a
// live one always is; commands on <prefix>/cmd are the controller's and
// always run (rounds are not run twice further on, by id).
func TestControlRequests(t *testing.T) {
	c := NewControl(Config{Prefix: "hearth"}, "alder", nil, true)
	c.SetHomes([]string{"alder", "birch"}, []string{"birch"})
	req := func(id string) string { return `{"round": "` + id + `", "from": "birch"}` }
	steps := []struct {
		conn int // connections so far
		msg  fakeMessage
		want string // the round queued, "" for none
	}{
		{1, fakeMessage{"hearth/cmd/birch", req("b1"), true}, ""},
		{1, fakeMessage{"hearth/cmd", `{"round": "c1"}`, true}, "c1"},
		{1, fakeMessage{"hearth/cmd/birch", req("b2"), false}, "b2"},
		// After a round: the retained copy of b2 is known, b3 was sent
		// while this home was busy.
		{2, fakeMessage{"hearth/cmd/birch", req("b2"), true}, ""},
		{3, fakeMessage{"hearth/cmd/birch", req("b3"), true}, "b3"},
		{3, fakeMessage{"hearth/cmd/birch", `{"round": "a/b"}`, false}, ""},
		{4, fakeMessage{"hearth/cmd/birch", req("b3"), true}, ""},
	}
	for i, s := range steps {
		c.mu.Lock()
		c.conns = s.conn
		c.mu.Unlock()
		c.onCommand(nil, s.msg)
		got := ""
		select {
		case r := <-c.cmds:
			got = r.ID
		default:
		}
		if got != s.want {
			t.Errorf("step %d (%s %s retained=%v): queued %q, want %q", i, s.msg.topic, s.msg.payload, s.msg.retained, got, s.want)
		}
	}
}
