package broker

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// This file is the broker's in-memory transport: connections that carry
// the same MQTT bytes as TCP between goroutines of one process, for the
// agents `hearth sim` runs next to its embedded broker.
//
// Over loopback TCP every packet costs the sender a write system call and
// the receiver one or more reads (paho reads a packet's header a byte at a
// time, unbuffered), and a delivered QoS 1 message costs as many again
// for its PUBACK: in a 251-home SHDS run those calls took a fifth of all
// CPU time. A memory pipe copies the bytes under a mutex instead, and
// keeps TCP's semantics where paho and mochi rely on them: a bounded
// buffer whose writers block when it is full (back-pressure, as a socket's
// send buffer), whole Writes that never interleave, io.EOF after the peer
// closes and the buffer is drained, and read and write deadlines.

// memBuffer is the most unread bytes one direction of a memory pipe
// holds before its writer blocks: a few large envelopes, or thousands of
// small packets, like a loopback socket's buffers.
const memBuffer = 1 << 20

// memAddr is the address of both ends of a memory pipe.
type memAddr string

func (a memAddr) Network() string { return "memory" }
func (a memAddr) String() string  { return string(a) }

// memHalf is one direction of a memory pipe.
type memHalf struct {
	mu      sync.Mutex
	buf     []byte // unread bytes are buf[off:]
	off     int
	eof     bool // the writer closed: reads drain buf, then return io.EOF
	gone    bool // the reader closed: writes fail
	readyR  chan struct{}
	readyW  chan struct{}
	readMu  sync.Mutex // one Read at a time, as net.Conn's
	writeMu sync.Mutex // one Write at a time, so Writes never interleave
}

func newMemHalf() *memHalf {
	return &memHalf{readyR: make(chan struct{}, 1), readyW: make(chan struct{}, 1)}
}

// signal wakes one waiter on ch, if any, without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// memConn is one end of a memory pipe.
type memConn struct {
	in, out   *memHalf
	local     memAddr
	remote    memAddr
	rd, wd    *deadline
	closed    chan struct{}
	closeOnce sync.Once
}

// memPipe returns the two ends of a memory pipe, named by their
// addresses.
func memPipe(a, b string) (net.Conn, net.Conn) {
	ab, ba := newMemHalf(), newMemHalf()
	c1 := &memConn{in: ba, out: ab, local: memAddr(a), remote: memAddr(b), rd: newDeadline(), wd: newDeadline(), closed: make(chan struct{})}
	c2 := &memConn{in: ab, out: ba, local: memAddr(b), remote: memAddr(a), rd: newDeadline(), wd: newDeadline(), closed: make(chan struct{})}
	return c1, c2
}

// Read reads what is buffered, up to len(p), waiting for at least one
// byte.
func (c *memConn) Read(p []byte) (int, error) {
	h := c.in
	h.readMu.Lock()
	defer h.readMu.Unlock()
	for {
		if c.isClosed() {
			return 0, net.ErrClosed
		}
		if c.rd.expired() {
			return 0, os.ErrDeadlineExceeded
		}
		h.mu.Lock()
		if n := len(h.buf) - h.off; n > 0 || len(p) == 0 {
			k := copy(p, h.buf[h.off:])
			h.off += k
			if h.off == len(h.buf) {
				h.buf, h.off = h.buf[:0], 0
			}
			h.mu.Unlock()
			signal(h.readyW)
			if k < n {
				signal(h.readyR) // bytes left for the next Read
			}
			return k, nil
		}
		eof := h.eof
		h.mu.Unlock()
		if eof {
			return 0, io.EOF
		}
		select {
		case <-h.readyR:
		case <-c.rd.wait():
		case <-c.closed:
		}
	}
}

// Write appends p to the buffer, waiting while it is full.
func (c *memConn) Write(p []byte) (int, error) {
	h := c.out
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	n := 0
	for {
		if c.isClosed() {
			return n, net.ErrClosed
		}
		if c.wd.expired() {
			return n, os.ErrDeadlineExceeded
		}
		h.mu.Lock()
		if h.gone {
			h.mu.Unlock()
			return n, io.ErrClosedPipe
		}
		if free := memBuffer - (len(h.buf) - h.off); free > 0 {
			if h.off > 0 && len(h.buf)+min(free, len(p)-n) > cap(h.buf) {
				// Slide the unread bytes down rather than grow.
				h.buf = h.buf[:copy(h.buf, h.buf[h.off:])]
				h.off = 0
			}
			k := min(free, len(p)-n)
			h.buf = append(h.buf, p[n:n+k]...)
			n += k
			h.mu.Unlock()
			signal(h.readyR)
			if n == len(p) {
				return n, nil
			}
			continue
		}
		h.mu.Unlock()
		select {
		case <-h.readyW:
		case <-c.wd.wait():
		case <-c.closed:
		}
	}
}

// Close ends both directions: the peer reads what is buffered and then
// io.EOF, and its writes fail; this end's blocked calls return.
func (c *memConn) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		close(c.closed)
		c.out.mu.Lock()
		c.out.eof = true
		c.out.mu.Unlock()
		c.in.mu.Lock()
		c.in.gone = true
		c.in.buf, c.in.off = nil, 0
		c.in.mu.Unlock()
		signal(c.out.readyR)
		signal(c.in.readyW)
		c.rd.stop()
		c.wd.stop()
	})
	if !first {
		return net.ErrClosed
	}
	return nil
}

func (c *memConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) SetDeadline(t time.Time) error {
	if c.isClosed() {
		return net.ErrClosed
	}
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	if c.isClosed() {
		return net.ErrClosed
	}
	c.rd.set(t)
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	if c.isClosed() {
		return net.ErrClosed
	}
	c.wd.set(t)
	return nil
}

// deadline is a settable point in time that a blocked Read or Write waits
// for. mochi moves its clients' read deadline at every packet, so set
// reuses one timer, and a timer that fires for a deadline since moved
// later does nothing.
type deadline struct {
	mu     sync.Mutex
	at     time.Time
	timer  *time.Timer
	cancel chan struct{} // closed when at has passed
}

func newDeadline() *deadline { return &deadline{cancel: make(chan struct{})} }

// set moves the deadline to t; the zero time removes it.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = t
	fired := isClosed(d.cancel)
	if t.IsZero() {
		if d.timer != nil {
			d.timer.Stop()
		}
		if fired {
			d.cancel = make(chan struct{})
		}
		return
	}
	dur := time.Until(t)
	if dur <= 0 {
		if !fired {
			close(d.cancel)
		}
		return
	}
	if fired {
		d.cancel = make(chan struct{})
	}
	if d.timer == nil {
		d.timer = time.AfterFunc(dur, d.fire)
	} else {
		d.timer.Reset(dur)
	}
}

// fire closes cancel if the deadline has passed; a stale timer (the
// deadline moved later meanwhile) finds it has not.
func (d *deadline) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.at.IsZero() && !time.Now().Before(d.at) && !isClosed(d.cancel) {
		close(d.cancel)
	}
}

// wait returns a channel closed once the deadline has passed.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}

// expired reports whether the deadline has passed.
func (d *deadline) expired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return isClosed(d.cancel) || !d.at.IsZero() && !time.Now().Before(d.at)
}

// stop releases the timer.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// memListener is a net.Listener whose connections are memory pipes made
// by Dial.
type memListener struct {
	addr   memAddr
	conns  chan net.Conn
	done   chan struct{}
	once   sync.Once
	dialMu sync.Mutex
	n      int
}

func newMemListener(name string) *memListener {
	return &memListener{addr: memAddr(name), conns: make(chan net.Conn), done: make(chan struct{})}
}

// Dial returns the client end of a new pipe once Accept has taken the
// server end.
func (l *memListener) Dial(ctx context.Context) (net.Conn, error) {
	l.dialMu.Lock()
	l.n++
	client := l.addr.String() + "/client-" + strconv.Itoa(l.n)
	l.dialMu.Unlock()
	c, s := memPipe(client, l.addr.String())
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "memory", Addr: l.addr, Err: net.ErrClosed}
	case <-ctx.Done():
		return nil, &net.OpError{Op: "dial", Net: "memory", Addr: l.addr, Err: ctx.Err()}
	}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return l.addr }
