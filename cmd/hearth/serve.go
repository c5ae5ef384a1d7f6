package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/evcc"
)

// runServe serves the evcc optimizer's API until interrupted.
func runServe(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "serve", "[flags]")
	listen := fs.String("listen", "127.0.0.1:7050", "address to listen on (the evcc optimizer's port is 7050)")
	gap := fs.Float64("gap", energy.DefaultGap, "stop when no plan can be better by more than this fraction of the cost (0 < gap < 1)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if !(*gap > 0 && *gap < 1) {
		fmt.Fprintf(e.stderr, "hearth serve: --gap %g: want a fraction in (0, 1), e.g. 0.001\n", *gap)
		return exitUsage
	}
	if len(pos) != 0 {
		fmt.Fprintln(e.stderr, "hearth serve: takes no arguments")
		return exitUsage
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(e.stderr, "hearth serve:", err)
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "hearth serve: listening on http://%s (POST /optimize/charge-schedule, GET /optimize/health)\n", ln.Addr())
	return serveEvcc(ctx, e, ln, energy.Options{Gap: *gap})
}

// serveEvcc answers on ln until ctx ends.
func serveEvcc(ctx context.Context, e *env, ln net.Listener, opts energy.Options) int {
	srv := &http.Server{Handler: evcc.Handler(e.log, opts), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintln(e.stderr, "hearth serve:", err)
		return exitFailed
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		fmt.Fprintln(e.stderr, "hearth serve:", err)
		return exitFailed
	}
	<-done
	return exitOK
}
