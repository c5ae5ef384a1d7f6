package broker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/nettest"
)

// TestMemConnConformance runs the Go team's net.Conn conformance suite
// (golang.org/x/net/nettest) on memory pipes: basic and racy I/O,
// ping-pong, every deadline case, Close unblocking calls, concurrent
// methods.
func TestMemConnConformance(t *testing.T) {
	nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) {
		c1, c2 := memPipe("a", "b")
		return c1, c2, func() { c1.Close(); c2.Close() }, nil
	})
}

// TestMemConnStream sends seeded random bytes in random-sized writes
// through a pipe, several times its buffer, from concurrent writers each
// holding whole writes, and checks that the reader sees every write
// intact, in each writer's order, with no interleaving.
func TestMemConnStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		writers int
		maxLen  int
		readLen int
	}{
		{"one writer, small reads", 1, 300, 1},
		{"one writer, large writes", 1, 3 * memBuffer / 2, 64 << 10},
		{"four writers", 4, 5000, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c1, c2 := memPipe("a", "b")
			defer c1.Close()
			rng := rand.New(rand.NewPCG(1, uint64(tc.writers)))
			// Each write is a frame: writer id, length, then its bytes,
			// all of one value derived from (writer, sequence).
			var frames [][][]byte
			total := 0
			for w := range tc.writers {
				var fs [][]byte
				for k := 0; total < 3*memBuffer/tc.writers*(w+1); k++ {
					n := 1 + rng.IntN(tc.maxLen)
					f := make([]byte, 5+n)
					f[0] = byte(w)
					f[1], f[2], f[3], f[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
					for i := range n {
						f[5+i] = byte(w*31 + k)
					}
					fs = append(fs, f)
					total += len(f)
				}
				frames = append(frames, fs)
			}
			var wg sync.WaitGroup
			for w := range tc.writers {
				wg.Go(func() {
					for _, f := range frames[w] {
						if _, err := c1.Write(f); err != nil {
							t.Errorf("write: %v", err)
							return
						}
					}
				})
			}
			go func() { wg.Wait(); c1.Close() }()
			var got bytes.Buffer
			buf := make([]byte, tc.readLen)
			for {
				n, err := c2.Read(buf)
				got.Write(buf[:n])
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("read: %v", err)
				}
			}
			next := make([]int, tc.writers)
			data := got.Bytes()
			for len(data) > 0 {
				if len(data) < 5 {
					t.Fatalf("%d stray bytes", len(data))
				}
				w := int(data[0])
				n := int(data[1])<<24 | int(data[2])<<16 | int(data[3])<<8 | int(data[4])
				if w >= tc.writers || next[w] >= len(frames[w]) || !bytes.Equal(data[:5+n], frames[w][next[w]]) {
					t.Fatalf("frame of writer %d, #%d, is not what it wrote (interleaved or reordered)", w, next[w])
				}
				next[w]++
				data = data[5+n:]
			}
			for w, k := range next {
				if k != len(frames[w]) {
					t.Errorf("writer %d: %d of %d frames arrived", w, k, len(frames[w]))
				}
			}
		})
	}
}

// TestMemConnClose checks the close semantics the MQTT stacks rely on.
func TestMemConnClose(t *testing.T) {
	c1, c2 := memPipe("a", "b")
	if _, err := c1.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c1.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v, want net.ErrClosed", err)
	}
	got, err := io.ReadAll(c2)
	if err != nil || string(got) != "last words" {
		t.Errorf("peer read %q, %v after close; want the buffered bytes then EOF", got, err)
	}
	if _, err := c2.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write to a closed peer: %v, want io.ErrClosedPipe", err)
	}
	if _, err := c1.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read on a closed end: %v, want net.ErrClosed", err)
	}
	// A writer blocked on a full buffer returns when the reader closes.
	c3, c4 := memPipe("a", "b")
	done := make(chan error, 1)
	go func() { _, err := c3.Write(make([]byte, 2*memBuffer)); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c4.Close()
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("blocked write after the reader closed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write blocked on a full buffer did not return when the reader closed")
	}
	c3.Close()
}

// TestMemConnDeadlineMoves checks that moving a deadline later, as mochi
// does at every packet, keeps a Read waiting, and that the new deadline
// still ends it.
func TestMemConnDeadlineMoves(t *testing.T) {
	c1, c2 := memPipe("a", "b")
	defer c1.Close()
	defer c2.Close()
	start := time.Now()
	c2.SetReadDeadline(start.Add(20 * time.Millisecond))
	go func() {
		for range 5 {
			time.Sleep(10 * time.Millisecond)
			c2.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		}
	}()
	_, err := c2.Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v, want a deadline error", err)
	}
	if el := time.Since(start); el < 70*time.Millisecond {
		t.Errorf("read ended after %v: a stale timer fired for a deadline moved later", el)
	}
}

// TestMemListener checks Dial and Accept and that both fail once the
// listener is closed.
func TestMemListener(t *testing.T) {
	l := newMemListener("memory")
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		io.Copy(c, c) // echo
		c.Close()
	}()
	c, err := l.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo: %q, %v", buf, err)
	}
	c.Close()
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
	if _, err := l.Dial(context.Background()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Dial after Close: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newMemListener("x").Dial(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with no Accept and a cancelled context: %v", err)
	}
}
