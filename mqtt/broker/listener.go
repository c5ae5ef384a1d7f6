package broker

import (
	"crypto/tls"
	"log/slog"
	"net"
	"sync"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// listener serves mochi the connections of a net.Listener: the TCP one
// (optionally TLS) that outside clients reach, or the memory one of the
// agents in this process (Broker.Dial). It replaces mochi's TCP listener
// to fix its shutdown: mochi disconnects the clients before it stops
// accepting, and leaves a connection accepted meanwhile open without
// serving it, so a client that reconnects at that moment waits for its
// whole connect timeout. This one stops accepting first, then closes
// every connection it accepted, and waits until mochi is done with them:
// mochi counts clients in a WaitGroup it waits on right after, and a
// connection still being set up would otherwise Add to it concurrently
// with that Wait.
//
// It never calls mochi's own disconnection of a listener's clients (the
// CloseFn): v2.7.9's Clients.GetByListener read-locks the client list
// twice, and a client connecting or leaving in between deadlocks the
// broker for good (mochi-mqtt/server#488, unfixed in any release). A
// closed connection ends each client's session as a disconnection does.
type listener struct {
	id, addr string
	protocol string
	// listen opens ln in Init.
	listen func() (net.Listener, error)
	ln     net.Listener
	log    *slog.Logger

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup // one per connection being served
}

var _ listeners.Listener = (*listener)(nil)

// newTCPListener listens on addr, with TLS when tlsCfg is set.
func newTCPListener(id, addr string, tlsCfg *tls.Config) *listener {
	return &listener{id: id, addr: addr, protocol: "tcp", conns: map[net.Conn]struct{}{}, listen: func() (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		if tlsCfg != nil {
			ln = tls.NewListener(ln, tlsCfg)
		}
		return ln, nil
	}}
}

// newMemoryListener serves the memory pipes that ml's Dial makes.
func newMemoryListener(id string, ml *memListener) *listener {
	return &listener{id: id, addr: ml.Addr().String(), protocol: "memory", conns: map[net.Conn]struct{}{}, listen: func() (net.Listener, error) {
		return ml, nil
	}}
}

func (l *listener) ID() string       { return l.id }
func (l *listener) Protocol() string { return l.protocol }

func (l *listener) Address() string {
	if l.ln != nil {
		return l.ln.Addr().String()
	}
	return l.addr
}

func (l *listener) Init(log *slog.Logger) error {
	l.log = log
	ln, err := l.listen()
	if err != nil {
		return err
	}
	l.ln = ln
	return nil
}

func (l *listener) Serve(establish listeners.EstablishFn) {
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			_ = conn.Close()
			continue
		}
		l.conns[conn] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.wg.Done()
			if err := establish(l.id, conn); err != nil {
				l.log.Debug("client connection ended", "err", err)
			}
			l.mu.Lock()
			delete(l.conns, conn)
			l.mu.Unlock()
			_ = conn.Close()
		}()
	}
}

func (l *listener) Close(listeners.CloseFn) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	if l.ln != nil {
		_ = l.ln.Close()
	}
	l.mu.Lock()
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
