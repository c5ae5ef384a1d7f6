"""Computes the optimum of every pyDCOP instance in this folder with CPython
itself, as an independent truth for hearth's reader and solvers.

Each constraint is compiled the way pyDCOP compiles it (a Python function of
the names the text reads and never assigns; source files imported as the
module `source`), tabulated, and the problem is minimised exactly by
variable elimination over Python dictionaries (maximised for objective:
max). Run: python3 optima.py (needs PyYAML). It prints one line per file:
the optimum in the file's own sense.
"""
import ast
import builtins
import glob
import importlib.util
import itertools
import os
import sys

import yaml


def compile_fn(text, module=None):
    text = text.lstrip()
    tree = ast.parse(text)
    loaded, stored, has_return = [], set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in loaded:
                loaded.append(node.id)
            elif isinstance(node.ctx, ast.Store):
                stored.add(node.id)
        elif isinstance(node, ast.Return):
            has_return = True
    names = [n for n in loaded if n not in stored and n not in dir(builtins) and n != "source"]
    body = text.replace("\n", "\n    ") if has_return else "return " + text
    env = {"source": module}
    exec("def f(%s):\n    %s" % (", ".join(names), body), env)
    return names, env["f"]


def load(path):
    with open(path, encoding="utf-8") as f:
        d = yaml.safe_load(f)
    doms = {}
    for name, dd in d["domains"].items():
        vals = dd["values"]
        if len(vals) == 1 and isinstance(vals[0], str) and ".." in vals[0]:
            lo, hi = vals[0].split("..")
            vals = list(range(int(lo), int(hi) + 1))
        doms[name] = vals
    variables = {v: doms[vd["domain"]] for v, vd in d["variables"].items()}
    factors = []  # (scope, dict assignment tuple -> cost)

    def tabulate(names, f):
        table = {}
        for combo in itertools.product(*(variables[n] for n in names)):
            table[combo] = f(*combo)
        factors.append((names, table))

    for v, vd in d["variables"].items():
        if "cost_function" in vd:
            tabulate(*compile_fn(str(vd["cost_function"])))
    for c, cd in d.get("constraints", {}).items():
        if cd["type"] == "intention":
            module = None
            if "source" in cd:
                spec = importlib.util.spec_from_file_location(
                    "source", os.path.join(os.path.dirname(path), cd["source"]))
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            tabulate(*compile_fn(str(cd["function"]), module))
        else:
            scope = cd["variables"] if isinstance(cd["variables"], list) else [cd["variables"].strip()]
            table = {combo: cd.get("default") for combo in itertools.product(*(variables[n] for n in scope))}
            for cost, tuples in cd["values"].items():
                for t in str(tuples).split("|"):
                    toks = t.split()
                    combo = tuple(next(x for x in variables[n] if str(x) == tok) for n, tok in zip(scope, toks))
                    table[combo] = cost
            factors.append((scope, table))
    sign = -1 if d["objective"] == "max" else 1
    return variables, [(s, {k: sign * c for k, c in t.items()}) for s, t in factors], sign


def eliminate(variables, factors):
    """Minimises the sum of the factors by variable elimination."""
    factors = list(factors)
    remaining = set(variables)
    while remaining:
        # the variable whose elimination joins the fewest variables
        def width(v):
            return len(set().union(*[set(s) for s, _ in factors if v in s]) | {v})
        v = min(sorted(remaining), key=width)
        remaining.discard(v)
        touching = [f for f in factors if v in f[0]]
        factors = [f for f in factors if v not in f[0]]
        scope = sorted(set().union(*[set(s) for s, _ in touching]) - {v}) if touching else []
        table = {}
        for combo in itertools.product(*(variables[n] for n in scope)):
            a = dict(zip(scope, combo))
            best = None
            for x in variables[v]:
                a[v] = x
                c = sum(t[tuple(a[n] for n in s)] for s, t in touching)
                best = c if best is None else min(best, c)
            table[combo] = best
        factors.append((scope, table))
    return sum(t[()] for _, t in factors)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "*.y*ml"))):
        variables, factors, sign = load(path)
        print("%s %r" % (os.path.basename(path), sign * eliminate(variables, factors)))
