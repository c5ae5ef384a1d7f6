package broker

import (
	"crypto/tls"
	"log/slog"
	"net"
	"sync"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// tcpListener replaces mochi's TCP listener to fix its shutdown: mochi
// disconnects the clients before it stops accepting, and leaves a
// connection accepted meanwhile open without serving it, so a client that
// reconnects at that moment waits for its whole connect timeout. This one
// stops accepting first, then disconnects the clients, then closes every
// connection it accepted that is still open, and waits until mochi is
// done with them: mochi counts clients in a WaitGroup it waits on right
// after, and a connection still being set up would otherwise Add to it
// concurrently with that Wait.
type tcpListener struct {
	id, addr string
	tls      *tls.Config
	ln       net.Listener
	log      *slog.Logger

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup // one per connection being served
}

var _ listeners.Listener = (*tcpListener)(nil)

func newTCPListener(id, addr string, tlsCfg *tls.Config) *tcpListener {
	return &tcpListener{id: id, addr: addr, tls: tlsCfg, conns: map[net.Conn]struct{}{}}
}

func (l *tcpListener) ID() string       { return l.id }
func (l *tcpListener) Protocol() string { return "tcp" }

func (l *tcpListener) Address() string {
	if l.ln != nil {
		return l.ln.Addr().String()
	}
	return l.addr
}

func (l *tcpListener) Init(log *slog.Logger) error {
	l.log = log
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	if l.tls != nil {
		ln = tls.NewListener(ln, l.tls)
	}
	l.ln = ln
	return nil
}

func (l *tcpListener) Serve(establish listeners.EstablishFn) {
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

func (l *tcpListener) Close(closeClients listeners.CloseFn) {
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
	closeClients(l.id)
	l.mu.Lock()
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
