package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/mva/protocol"
)

// paramFlag collects repeated -p name=value protocol parameters.
type paramFlag map[string]float64

func (p paramFlag) String() string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (p paramFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not name=value", s)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		var named bool
		if f, named = protocol.ParamValue(k, v); !named {
			if names := protocol.ParamValueNames(k); len(names) > 0 {
				return fmt.Errorf("parameter %s: %q is not a number or one of %s", k, v, strings.Join(names, ", "))
			}
			return fmt.Errorf("parameter %s: %q is not a number", k, v)
		}
	}
	p[k] = f
	return nil
}
