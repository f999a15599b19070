#!/usr/bin/env python3
"""mig_check.py: an independent check of `gpupack mig plan` (issue 14).

Written apart from the planner and sharing no code with it: it reads the same
topology file and a request file and finds the best plan under the documented
objective (doc/mig.md: most requests satisfied, then least waste, then fewest
SMs, then fewest create/destroy operations) by its own means:

  --exhaustive  every geometry of every GPU (profiles at placements, straight
                from the rules) and every assignment of the jobs to instances;
                for tiny inputs only;
  (default)     an integer program over the same rules (scipy.optimize.milp,
                HiGHS), one solve per level of the objective, each level fixed
                at its optimum before the next.

The formulation is the one the geometry rules state, not the planner's
(which works on tables of profile counts and GPU loads): a binary per GPU and
candidate instance (profile at placement), memory slices used at most once,
compute slices and per-profile counts within the GPU's, idle instances kept,
reused or destroyed, jobs counted per class in each instance.

  mig_check.py [--exhaustive] [--time-limit S] [--node-limit N] [--context BYTES] TOPOLOGY REQUESTS
  mig_check.py --batch    (one such line of arguments per line of stdin)

Prints one JSON line: {"status": "optimal"|"limit", "satisfied": N,
"waste_bytes": N, "sms": N, "operation_count": N}; with "limit" (out of
time, or past N branch-and-bound nodes in a level) the numbers are those of
the levels proven so far (later ones null). A node limit, unlike time, gives
the same answer on a busy machine as on a quiet one.

Every level's model is feasible by construction (the plan that creates and
places nothing meets level 1's rows; each later level's model holds the
solution of the one before), so a solver that calls one infeasible, or fails
otherwise, is wrong: the level is solved again without HiGHS's presolve
(scipy 1.10's presolve calls bench mix 4 on 8 A100s infeasible), and where
that fails too the check fails loudly: one line on stderr, exit 3, and
{"status": "error", "message": ...} on stdout. It never answers a level it
did not solve.
"""
import itertools
import json
import math
import os
import re
import sys

MIB = 1 << 20


def parse_size(text):
    """gpupack's sizes: K, M, G, T (with or without i/iB) powers of 1024; KB, MB, GB, TB powers of 1000."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*([KMGTkmgt]?)(i?B?|B)?", text.strip())
    if not m:
        raise ValueError("bad size %r" % text)
    num, unit, suffix = m.group(1), m.group(2).upper(), m.group(3) or ""
    powers = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}
    base = 1000 if (suffix == "B" and unit) else 1024
    return int(round(float(num) * base ** powers[unit]))


def parse_topology(path):
    """GPUs with MIG profiles: profiles, existing instances (busy if a process runs in them)."""
    gpus, g = [], None
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word, rest = (line.split(None, 1) + [""])[:2]
        kv = dict(re.findall(r"(\w+)=(\S+)", rest))
        if word == "gpu":
            g = {"profiles": [], "gis": {}, "busy": set(), "mig": False}
            gpus.append(g)
        elif g is None:
            continue
        elif word == "mig":
            g["mig"] = kv.get("current") == "enabled"
        elif word == "profile":
            places = []
            for p in kv["placements"].split(","):
                start, size = p.split("+")
                places.append((int(start), int(size)))
            g["profiles"].append({
                "name": kv["name"].lower(), "slices": int(kv["slices"]),
                "mem": parse_size(kv["memory"]), "sms": int(kv["sms"]),
                "max": int(kv["max"]), "places": places})
        elif word == "gi":
            start, size = kv["placement"].split("+")
            g["gis"][kv["id"]] = (kv["profile"].lower(), int(start), int(size))
        elif word == "process" and "gi" in kv:
            g["busy"].add(kv["gi"])
    out = []
    for g in gpus:
        if not g["profiles"]:
            continue
        names = [p["name"] for p in g["profiles"]]
        existing = []
        if g["mig"]:
            for gi, (name, start, size) in sorted(g["gis"].items()):
                existing.append({"profile": names.index(name), "at": (start, size), "busy": gi in g["busy"]})
        g["existing"] = existing
        g["compute"] = max(p["slices"] for p in g["profiles"])
        g["full_sms"] = max(p["sms"] for p in g["profiles"])
        out.append(g)
    return out


def parse_requests(path):
    reqs = []
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        count = int(line[0])
        what = line[1]
        share = float(line[2]) if len(line) > 2 else 0.0
        if re.fullmatch(r"[0-9]+g\.[0-9]+gb(\+me)?", what.lower()):
            reqs.append({"n": count, "profile": what.lower(), "mem": 0, "share": share})
        else:
            reqs.append({"n": count, "profile": None, "mem": parse_size(what), "share": share})
    return reqs


def classes(reqs, context):
    """Identical requests are one class; memory jobs carry their CUDA context."""
    out = []
    for r in reqs:
        key = (r["profile"], r["mem"], r["share"])
        for c in out:
            if c["key"] == key:
                c["n"] += r["n"]
                break
        else:
            out.append({"key": key, "n": r["n"], "profile": r["profile"],
                        "mem": r["mem"] + (context if r["profile"] is None else 0), "share": r["share"]})
    return out


def job_on(g, c):
    """How class c may go on GPU g: ('named', p) | ('big', [profiles]) | ('small', need) | None."""
    if c["profile"] is not None:
        names = [p["name"] for p in g["profiles"]]
        return ("named", names.index(c["profile"])) if c["profile"] in names else None
    need = math.ceil(c["share"] * g["full_sms"] - 1e-9) if c["share"] > 0 else 0
    if c["mem"] < min(p["mem"] for p in g["profiles"]):
        return ("small", need)
    fit = [i for i, p in enumerate(g["profiles"]) if c["mem"] <= p["mem"] and need <= p["sms"]]
    return ("big", fit) if fit else None


def mask(at):
    start, size = at
    return ((1 << size) - 1) << start


# ---------------------------------------------------------------- exhaustive

def geometries(g):
    """Every valid set of new instances around the busy ones: lists of (profile, placement)."""
    cands = [(i, at) for i, p in enumerate(g["profiles"]) for at in p["places"]]
    busy = [e for e in g["existing"] if e["busy"]]
    used0 = 0
    for e in busy:
        used0 |= mask(e["at"])
    out = []

    def rec(i, chosen, used, slices, count):
        out.append(list(chosen))
        for j in range(i, len(cands)):
            p, at = cands[j]
            pr = g["profiles"][p]
            if used & mask(at) or slices + pr["slices"] > g["compute"] or count.get(p, 0) >= pr["max"]:
                continue
            count[p] = count.get(p, 0) + 1
            chosen.append((p, at))
            rec(j + 1, chosen, used | mask(at), slices + pr["slices"], count)
            chosen.pop()
            count[p] -= 1

    count0 = {}
    for e in busy:
        count0[e["profile"]] = count0.get(e["profile"], 0) + 1
    if sum(g["profiles"][e["profile"]]["slices"] for e in busy) <= g["compute"]:
        rec(0, [], used0, sum(g["profiles"][e["profile"]]["slices"] for e in busy), count0)
    return out


def ops_of(g, chosen):
    """Fewest operations: reuse idle instances at the same place, keep the others that still fit."""
    idle = [e for e in g["existing"] if not e["busy"]]
    best = None
    for keep in itertools.product([0, 1], repeat=len(idle)):
        used, slices, count = 0, 0, {}
        items = [(e["profile"], e["at"]) for e in g["existing"] if e["busy"]]
        items += [(p, at) for p, at in chosen]
        reused = set()
        for (p, at) in chosen:
            for n, e in enumerate(idle):
                if n not in reused and e["profile"] == p and e["at"] == at:
                    reused.add(n)
                    break
        ok = True
        for n, e in enumerate(idle):
            if keep[n] and n not in reused:
                items.append((e["profile"], e["at"]))
            if n in reused and not keep[n]:
                ok = False
        for p, at in items:
            if used & mask(at):
                ok = False
            used |= mask(at)
            slices += g["profiles"][p]["slices"]
            count[p] = count.get(p, 0) + 1
        if not ok or slices > g["compute"] or any(count[p] > g["profiles"][p]["max"] for p in count):
            continue
        ops = (len(chosen) - len(reused)) + sum(1 for n in range(len(idle)) if not keep[n])
        best = ops if best is None else min(best, ops)
    return best


def exhaustive(gpus, cls):
    """Every geometry of every GPU, every job (unit by unit) into every instance or nowhere."""
    units = [k for k, c in enumerate(cls) for _ in range(c["n"])]
    geos = []
    for g in gpus:
        # a plan's score depends on an instance's profile, not its place: one geometry per
        # multiset of profiles and operation count is enough
        seen = {}
        for geo in geometries(g):
            key = (tuple(sorted(p for p, at in geo)), ops_of(g, geo))
            if len(geo) <= len(units) and key not in seen:
                seen[key] = (geo, key[1])
        geos.append(list(seen.values()))
    best = None
    for combo in itertools.product(*geos):
        insts = []
        ops = 0
        for gi, (geo, o) in enumerate(combo):
            ops += o
            for p, at in geo:
                insts.append((gi, p))
        state = [[] for _ in insts]

        def score():
            sat = waste = sms = 0
            for n, (gi, p) in enumerate(insts):
                if not state[n]:
                    return None  # a plan creates no empty instance
                pr = gpus[gi]["profiles"][p]
                sat += len(state[n])
                waste += pr["mem"] - sum(m for _, m in state[n])
                sms += pr["sms"]
            return (-sat, waste, sms, ops)

        def place(u):
            nonlocal best
            if u == len(units):
                s = score()
                if s is not None and (best is None or s < best):
                    best = s
                return
            k = units[u]
            place(u + 1)
            for n, (gi, p) in enumerate(insts):
                how = job_on(gpus[gi], cls[k])
                pr = gpus[gi]["profiles"][p]
                inside = state[n]
                if how is None:
                    continue
                if how[0] == "named" or how[0] == "big":
                    ok = (how[1] == p) if how[0] == "named" else (p in how[1])
                    if not ok or inside:
                        continue
                    state[n] = [("x", pr["mem"] if how[0] == "named" else cls[k]["mem"])]
                    place(u + 1)
                    state[n] = []
                else:
                    if any(kind == "x" for kind, _ in inside):
                        continue
                    mem = sum(m for _, m in inside) + cls[k]["mem"]
                    need = sum(int(kind) for kind, _ in inside) + how[1]
                    if mem > pr["mem"] or need > pr["sms"]:
                        continue
                    inside.append((str(how[1]), cls[k]["mem"]))
                    place(u + 1)
                    inside.pop()
        place(0)
    sat, waste, sms, ops = best
    return {"status": "optimal", "satisfied": -sat, "waste_bytes": waste, "sms": sms, "operation_count": ops}


# ---------------------------------------------------------- integer program

LIMITS = {}  # --node-limit N: {"node_limit": N}


class SolverError(Exception):
    """The solver failed on a model that has a solution: the check cannot answer."""


def solve_level(milp, c, cons, integer, bounds, time_limit, lvl, known):
    """One level: scipy's result, optimal or out of time. known: a solution the model has (None at level 1)."""
    why = ""
    for presolve in (True, False):
        res = milp(c, constraints=cons, integrality=integer, bounds=bounds,
                   options=dict(LIMITS, time_limit=time_limit, mip_rel_gap=0, disp=False, presolve=presolve))
        if os.environ.get("MIG_CHECK_SOLVER_FAILS"):
            # tests/cli/mig-check.t: a solver that calls every model infeasible, as scipy 1.10's presolve can
            res.status, res.x, res.message = 2, None, "The problem is infeasible. (MIG_CHECK_SOLVER_FAILS)"
        if res.status == 0 and res.x is not None:
            return res
        if res.status == 1:
            return res  # out of time: the levels so far stand
        why = "%s (status %d)" % (res.message, res.status)
        sys.stderr.write("mig_check.py: level %d: %s%s\n" % (
            lvl + 1, why, ", solving it again without presolve" if presolve else ""))
    raise SolverError("level %d: the solver failed on a feasible model (%s): %s" % (
        lvl + 1, "the plan of the level before is a solution" if known is not None
        else "the plan that places nothing is a solution", why))


def milp_check(gpus, cls, time_limit):
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    names = []
    index = {}

    def var(name):
        index[name] = len(names)
        names.append(name)
        return index[name]

    integer = []
    upper = []
    rows = []  # (dict var->coef, lo, hi)
    sat, waste, sms, ops = {}, {}, {}, {}

    def add(d, v, c):
        d[v] = d.get(v, 0) + c

    jobs = [dict() for _ in cls]
    for gi, g in enumerate(gpus):
        cands = [(p, at) for p, pr in enumerate(g["profiles"]) for at in pr["places"]]
        busy = [e for e in g["existing"] if e["busy"]]
        idle = [e for e in g["existing"] if not e["busy"]]
        u = [var(("u", gi, c)) for c in range(len(cands))]
        integer += [1] * len(u)
        upper += [1] * len(u)
        left = [var(("left", gi, n)) for n in range(len(idle))]
        integer += [1] * len(left)
        upper += [1] * len(left)
        # memory slices: each used once
        for sl in range(8):
            bit = 1 << sl
            if any(mask(e["at"]) & bit for e in busy):
                d = {u[c]: 1 for c, (p, at) in enumerate(cands) if mask(at) & bit}
                d.update({left[n]: 1 for n, e in enumerate(idle) if mask(e["at"]) & bit})
                if d:
                    rows.append((d, -np.inf, 0))
                continue
            d = {u[c]: 1 for c, (p, at) in enumerate(cands) if mask(at) & bit}
            for n, e in enumerate(idle):
                if mask(e["at"]) & bit:
                    d[left[n]] = d.get(left[n], 0) + 1
            if d:
                rows.append((d, -np.inf, 1))
        bslices = sum(g["profiles"][e["profile"]]["slices"] for e in busy)
        d = {u[c]: g["profiles"][p]["slices"] for c, (p, at) in enumerate(cands)}
        for n, e in enumerate(idle):
            d[left[n]] = g["profiles"][e["profile"]]["slices"]
        rows.append((d, -np.inf, g["compute"] - bslices))
        for p, pr in enumerate(g["profiles"]):
            d = {u[c]: 1 for c, (q, at) in enumerate(cands) if q == p}
            for n, e in enumerate(idle):
                if e["profile"] == p:
                    d[left[n]] = 1
            nb = sum(1 for e in busy if e["profile"] == p)
            rows.append((d, -np.inf, pr["max"] - nb))
        # operations: creates of what is not an idle instance's place; destroys of idle ones not kept
        for c, (p, at) in enumerate(cands):
            same = [n for n, e in enumerate(idle) if e["profile"] == p and e["at"] == at]
            if same:
                # reused: u at the idle one's place; it cannot also be left idle
                rows.append(({u[c]: 1, left[same[0]]: 1}, -np.inf, 1))
                # destroy = 1 - left - u
                add(ops, left[same[0]], -1)
                add(ops, u[c], -1)
                ops.setdefault("const", 0)
                ops["const"] += 1
            else:
                add(ops, u[c], 1)
        for n, e in enumerate(idle):
            if not any(q == e["profile"] and at == e["at"] for q, at in cands):
                add(ops, left[n], -1)
                ops["const"] = ops.get("const", 0) + 1
        # contents
        for c, (p, at) in enumerate(cands):
            pr = g["profiles"][p]
            ex = var(("excl", gi, c))
            integer.append(1)
            upper.append(1)
            rows.append(({ex: 1, u[c]: -1}, -np.inf, 0))
            total = {u[c]: -1}
            memrow, needrow = {}, {}
            bigs, smalls = {}, {}
            for k, cl in enumerate(cls):
                how = job_on(g, cl)
                if how is None:
                    continue
                if how[0] in ("named", "big"):
                    if (how[0] == "named" and how[1] != p) or (how[0] == "big" and p not in how[1]):
                        continue
                    x = var(("x", gi, c, k))
                    integer.append(1)
                    upper.append(1)
                    bigs[x] = 1
                    m = pr["mem"] if how[0] == "named" else cl["mem"]
                else:
                    if cl["mem"] > pr["mem"] or how[1] > pr["sms"]:
                        continue
                    x = var(("x", gi, c, k))
                    integer.append(1)
                    upper.append(min(cl["n"], pr["mem"] // cl["mem"]))
                    smalls[x] = 1
                    memrow[x] = cl["mem"] / MIB
                    needrow[x] = how[1]
                    m = cl["mem"]
                total[x] = 1
                add(jobs[k], x, 1)
                add(sat, x, 1)
                add(waste, x, -m / MIB)
            add(waste, u[c], pr["mem"] / MIB)
            add(sms, u[c], pr["sms"])
            rows.append((total, 0, np.inf))  # an instance holds at least one job
            if bigs:
                d = dict(bigs)
                d[ex] = -1
                rows.append((d, -np.inf, 0))  # exclusive jobs only in an exclusive instance, one
            if smalls:
                d = dict(smalls)
                d[ex] = 64
                rows.append((d, -np.inf, 64))  # shared ones never in an exclusive one
                d = dict(smalls)
                d[u[c]] = -64
                rows.append((d, -np.inf, 0))
                d = dict(memrow)
                rows.append((d, -np.inf, pr["mem"] / MIB))
                if any(needrow.values()):
                    rows.append((dict(needrow), -np.inf, pr["sms"]))
    for k, cl in enumerate(cls):
        if jobs[k]:
            rows.append((jobs[k], -np.inf, cl["n"]))
    # identical GPUs (same profiles, no instances) are interchangeable: order them by the
    # memory of their instances, which only rules out permutations of a plan
    for a in range(len(gpus) - 1):
        b = a + 1
        if gpus[a]["existing"] or gpus[b]["existing"] or gpus[a]["profiles"] != gpus[b]["profiles"]:
            continue
        d = {}
        for gi, sign in ((a, 1), (b, -1)):
            g = gpus[gi]
            for c, (p, at) in enumerate((p, at) for p, pr in enumerate(g["profiles"]) for at in pr["places"]):
                d[index[("u", gi, c)]] = d.get(index[("u", gi, c)], 0) + sign * g["profiles"][p]["mem"] / MIB
        rows.append((d, 0, np.inf))
    nv = len(names)

    def vec(d):
        v = np.zeros(nv)
        for key, c in d.items():
            if key != "const":
                v[key] = c
        return v

    A = np.array([vec(d) for d, lo, hi in rows]) if rows else np.zeros((0, nv))
    lo = np.array([lo for d, lo, hi in rows])
    hi = np.array([hi for d, lo, hi in rows])
    bounds = Bounds(np.zeros(nv), np.array(upper, dtype=float))
    levels = [(sat, -1), (waste, 1), (sms, 1), (ops, 1)]
    fixed = []
    result = {"status": "optimal", "satisfied": None, "waste_bytes": None, "sms": None, "operation_count": None}
    keys = ["satisfied", "waste_bytes", "sms", "operation_count"]
    for lvl, (obj, sign) in enumerate(levels):
        cons = [LinearConstraint(A, lo, hi)] if len(rows) else []
        for fobj, fsign, val, tol in fixed:
            v = vec(fobj)
            if fsign < 0:
                cons.append(LinearConstraint(v.reshape(1, -1), val - tol, np.inf))
            else:
                cons.append(LinearConstraint(v.reshape(1, -1), -np.inf, val + tol))
        res = solve_level(milp, sign * vec(obj), cons, np.array(integer), bounds, time_limit, lvl,
                          x if lvl else None)
        if res.status != 0:
            result["status"] = "limit"
            return result
        x = np.round(res.x)
        val = float(vec(obj) @ x) + obj.get("const", 0)
        if lvl == 1:
            result[keys[lvl]] = int(round(val * MIB))
            fixed.append((obj, 1, float(vec(obj) @ x), 0.5 / 1024))
        else:
            result[keys[lvl]] = int(round(val))
            fixed.append((obj, sign, float(vec(obj) @ x), 0.5))
    return result


def main(argv):
    """One check: its JSON line on stdout; exit 0, 2 (usage) or 3 (the solver failed)."""
    exhaustive_mode = False
    time_limit = 60.0
    context = 528 * MIB
    LIMITS.clear()
    args = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--exhaustive":
            exhaustive_mode = True
        elif a == "--time-limit":
            i += 1
            time_limit = float(argv[i])
        elif a == "--node-limit":
            i += 1
            LIMITS["node_limit"] = int(argv[i])
        elif a == "--context":
            i += 1
            context = int(argv[i])
        else:
            args.append(a)
        i += 1
    if len(args) != 2:
        sys.stderr.write(__doc__)
        return 2
    gpus = parse_topology(args[0])
    cls = classes(parse_requests(args[1]), context)
    try:
        out = exhaustive(gpus, cls) if exhaustive_mode else milp_check(gpus, cls, time_limit)
    except SolverError as e:
        sys.stderr.write("mig_check.py: %s\n" % e)
        print(json.dumps({"status": "error", "message": str(e)}))
        return 3
    print(json.dumps(out))
    return 0


def batch():
    """--batch: one check per line of stdin (its arguments, split as sh words), each answered
    by a line on stdout: {"exit": N, "answer": {...}}; Python and scipy start once."""
    import contextlib
    import io
    import shlex
    for line in sys.stdin:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = main(shlex.split(line))
        text = buf.getvalue().strip()
        print(json.dumps({"exit": rc, "answer": json.loads(text) if text else None}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(batch() if sys.argv[1:] == ["--batch"] else main(sys.argv[1:]))
