package dpop

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"testing"
)

func TestScaleProblem(t *testing.T) {
	for _, pt := range []ScalePoint{{Agents: 1, LocalVars: 1}, {Agents: 3, LocalVars: 2}, {Agents: 4, LocalVars: 6}} {
		p := ScaleProblem(pt, 0, ScaleOptions{})
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: %v", pt, err)
		}
		_, connected, _ := shape(p)
		if !connected || len(p.Agents) != pt.Agents || len(p.Variables) != pt.Agents*pt.LocalVars {
			t.Fatalf("%+v: %d agents, %d variables, connected %v", pt, len(p.Agents), len(p.Variables), connected)
		}
		if q := ScaleProblem(pt, 0, ScaleOptions{}); fmt.Sprint(q) != fmt.Sprint(p) {
			t.Fatalf("%+v: not reproducible", pt)
		}
	}
}

// TestWriteScalingCSV writes a tiny sweep and checks every run's cost
// against brute force.
func TestWriteScalingCSV(t *testing.T) {
	pts := []ScalePoint{{Axis: "agents", Agents: 2, LocalVars: 3}, {Axis: "local_vars", Agents: 3, LocalVars: 2}}
	o := ScaleOptions{Instances: 2, Seed: 7, MaxCost: 20}
	var buf bytes.Buffer
	if err := WriteScalingCSV(context.Background(), &buf, pts, o); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(pts)*o.Instances || rows[0][6] != "cost" || rows[0][9] != "messages" {
		t.Fatalf("csv %v", rows)
	}
	for k, row := range rows[1:] {
		pt, inst := pts[k/o.Instances], k%o.Instances
		cost, err := strconv.ParseFloat(row[6], 64)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteForce(t, ScaleProblem(pt, inst, o)); cost != want {
			t.Fatalf("row %v: cost %v, brute force %v", row, cost, want)
		}
	}
}
