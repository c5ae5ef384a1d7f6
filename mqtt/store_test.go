package mqtt

import (
	"slices"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// fakeConn is a paho.Client whose connection is open or not as the test
// says; the store asks nothing else.
type fakeConn struct {
	paho.Client
	open bool
}

func (f *fakeConn) IsConnectionOpen() bool { return f.open }

// TestCopyStoreResume: a resume sees what was stored while the connection
// was down and what a dropped connection left unacknowledged, never a
// message published on the open connection (its own token sends it), and
// stored packets are copies.
func TestCopyStoreResume(t *testing.T) {
	s := newCopyStore()
	o := paho.NewClientOptions()
	conn := &fakeConn{}
	s.attach(o)(conn)
	s.Open()
	pub := func(id uint16) *packets.PublishPacket {
		p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
		p.Qos, p.MessageID, p.TopicName = 1, id, "t"
		return p
	}
	steps := []struct {
		do   func()
		want []string
	}{
		// Published while connecting: the resume sends it.
		{func() { s.Put("o.1", pub(1)) }, []string{"o.1"}},
		// The connection is up: a new publish goes with its own token.
		{func() { conn.open = true; s.Put("o.2", pub(2)) }, []string{"o.1"}},
		// An inbound QoS 2 message is always the resume's.
		{func() { s.Put("i.7", pub(7)) }, []string{"o.1", "i.7"}},
		// Acknowledged: gone.
		{func() { s.Del("o.1"); s.Del("i.7") }, nil},
		// The connection drops before o.2's PUBACK: the next attempt
		// resumes it.
		{func() { conn.open = false; s.attempt() }, []string{"o.2"}},
		{func() { s.Del("o.2") }, nil},
		{func() { conn.open = true; s.Put("o.3", pub(3)); s.Reset() }, nil},
	}
	for i, st := range steps {
		st.do()
		if got := s.All(); !slices.Equal(got, st.want) {
			t.Fatalf("step %d: All() = %v, want %v", i, got, st.want)
		}
	}
	p := pub(4)
	conn.open = false
	s.Put("o.4", p)
	got := s.Get("o.4").(*packets.PublishPacket)
	got.Dup = true
	if p.Dup || s.Get("o.4").(*packets.PublishPacket).Dup {
		t.Error("the store shares its PUBLISH packets")
	}
}
