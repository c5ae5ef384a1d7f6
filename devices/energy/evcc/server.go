package evcc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
)

// Plan decodes a request from r, plans it and returns the response; a
// bad request is a *FieldError, a plan the checker rejects an error
// wrapping plancheck.ErrRejected. A home whose hard limits cannot be kept
// answers status "Infeasible" with no schedule, as the optimizer does.
func Plan(ctx context.Context, r io.Reader, opts energy.Options) (*Response, error) {
	req, err := Decode(r)
	if err != nil {
		return nil, err
	}
	h := req.Home()
	p, err := energy.Solve(ctx, h, opts)
	if errors.Is(err, energy.ErrInfeasible) {
		return &Response{Status: "Infeasible", Extra: map[string]string{"reason": err.Error()}}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := plancheck.Check(h, p).Err(); err != nil {
		return nil, err
	}
	return Respond(h, p), nil
}

// MaxConcurrent bounds the plans Handler computes at once; further
// requests wait (or give up with their client). PlanTimeout bounds one
// plan.
const (
	MaxConcurrent = 4
	PlanTimeout   = time.Minute
)

// Handler serves POST /optimize/charge-schedule and GET /optimize/health.
func Handler(log *slog.Logger, opts energy.Options) http.Handler {
	slots := make(chan struct{}, MaxConcurrent)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /optimize/health", func(w http.ResponseWriter, _ *http.Request) {
		write(w, log, http.StatusOK, map[string]string{"status": "healthy", "message": "hearth planner is running"})
	})
	mux.HandleFunc("POST /optimize/charge-schedule", func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-r.Context().Done():
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), PlanTimeout)
		defer cancel()
		resp, err := Plan(ctx, http.MaxBytesReader(w, r.Body, MaxBody+1), opts)
		var fe *FieldError
		switch {
		case errors.As(err, &fe):
			write(w, log, http.StatusBadRequest, Body(err))
		case err != nil:
			log.Error("charge-schedule", "err", err)
			write(w, log, http.StatusInternalServerError, ErrorBody{Message: fmt.Sprintf("Optimization failed: %v", err)})
		default:
			write(w, log, http.StatusOK, resp)
		}
	})
	return mux
}

func write(w http.ResponseWriter, log *slog.Logger, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Warn("writing response", "err", err)
	}
}
