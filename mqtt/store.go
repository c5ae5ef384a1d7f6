package mqtt

import (
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho's ordered memory store, except that it never shares a
// PUBLISH packet with the rest of paho: Put stores a copy (paho puts a
// packet before handing it to its writer) and Get returns a copy. After a
// reconnection paho resends the stored messages and sets each one's DUP
// flag as it does; with the plain store it sets it on the very packet its
// writer may be encoding at that moment (one published just after the
// reconnection), a data race the race detector reports. The copies share
// the payload, which nobody writes.
type copyStore struct {
	*paho.OrderedMemoryStore
}

func newCopyStore() paho.Store { return copyStore{paho.NewOrderedMemoryStore()} }

func copyPublish(m packets.ControlPacket) packets.ControlPacket {
	if p, ok := m.(*packets.PublishPacket); ok {
		c := *p
		return &c
	}
	return m
}

func (s copyStore) Put(key string, m packets.ControlPacket) {
	s.OrderedMemoryStore.Put(key, copyPublish(m))
}

func (s copyStore) Get(key string) packets.ControlPacket {
	return copyPublish(s.OrderedMemoryStore.Get(key))
}
