package mqtt

import (
	"crypto/tls"
	"net/url"
	"strings"
	"sync"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho's ordered memory store with two changes for
// persistent sessions, which resume stored messages on every
// (re)connection.
//
// It never shares a PUBLISH packet with the rest of paho: Put stores a
// copy (paho puts a packet before handing it to its writer) and Get
// returns a copy. After a reconnection paho resends the stored messages
// and sets each one's DUP flag as it does; with the plain store it sets it
// on the very packet its writer may be encoding at that moment (one
// published just after the reconnection), a data race the race detector
// reports. The copies share the payload, which nobody writes.
//
// And the resume sees only what was stored before the connection came up
// (All). paho's resume runs after the connection is up, beside the
// OnConnect handler and any other publisher; a message published then is
// sent at once with its own token, and a resume that listed it too
// claimed its message id for a second token, completing the first — twice
// when its PUBACK had just completed it, which panics ("close of closed
// channel", a home's process killed at a round's start: TestFaultMatrix
// on CI). A message stored while the connection is open is left to its
// own token; every connection attempt hands whatever is still stored
// (unacknowledged) to the next resume.
type copyStore struct {
	*paho.OrderedMemoryStore
	mu     sync.Mutex
	client paho.Client
	// live are the outbound keys stored while the connection was open
	// since the last connection attempt.
	live map[string]bool
}

func newCopyStore() *copyStore {
	return &copyStore{OrderedMemoryStore: paho.NewOrderedMemoryStore(), live: map[string]bool{}}
}

// attach gives the store the client whose connection state decides what
// a resume sees, and makes every connection attempt of o hand what is
// stored to the resume.
func (s *copyStore) attach(o *paho.ClientOptions) func(paho.Client) {
	o.SetStore(s)
	o.SetConnectionAttemptHandler(func(_ *url.URL, cfg *tls.Config) *tls.Config {
		s.attempt()
		return cfg
	})
	return func(c paho.Client) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.client = c
	}
}

// attempt is called as a connection attempt begins: whatever is stored
// now was not acknowledged on the previous connection and is the
// resume's.
func (s *copyStore) attempt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.live)
}

func copyPublish(m packets.ControlPacket) packets.ControlPacket {
	if p, ok := m.(*packets.PublishPacket); ok {
		c := *p
		return &c
	}
	return m
}

func (s *copyStore) Put(key string, m packets.ControlPacket) {
	s.mu.Lock()
	cl := s.client
	s.mu.Unlock()
	open := cl != nil && cl.IsConnectionOpen()
	s.mu.Lock()
	if open && strings.HasPrefix(key, "o.") {
		s.live[key] = true
	} else {
		delete(s.live, key)
	}
	s.mu.Unlock()
	s.OrderedMemoryStore.Put(key, copyPublish(m))
}

func (s *copyStore) Get(key string) packets.ControlPacket {
	return copyPublish(s.OrderedMemoryStore.Get(key))
}

// All lists the stored keys a resume may send: those stored before the
// connection came up.
func (s *copyStore) All() []string {
	keys := s.OrderedMemoryStore.All()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := keys[:0]
	for _, k := range keys {
		if !s.live[k] {
			out = append(out, k)
		}
	}
	return out
}

func (s *copyStore) Del(key string) {
	s.mu.Lock()
	delete(s.live, key)
	s.mu.Unlock()
	s.OrderedMemoryStore.Del(key)
}

func (s *copyStore) Reset() {
	s.mu.Lock()
	clear(s.live)
	s.mu.Unlock()
	s.OrderedMemoryStore.Reset()
}
