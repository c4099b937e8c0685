"""Print HTCondor's own reading of a submit file as JSON, for the corpus
test (htcondor_corpus_test.go): per proc the executable, the arguments
and environment split by HTCondor's documented rules, and the resources
in MB; or {"error": ...} when HTCondor refuses the file."""
import fnmatch
import json
import os
import re
import sys

# The submitter's environment, before importing htcondor2 adds its own
# CONDOR_CONFIG to it.
SUBMITTER_ENV = dict(os.environ)

import htcondor2  # noqa: E402


def split_new(s):
    """Arguments/environment in the new syntax (inside "..."): whitespace
    separates, '...' groups (with '' a literal '), "" is a literal "."""
    out, cur, have, i, quoted = [], [], False, 0, False
    while i < len(s):
        c = s[i]
        if quoted:
            if c == "'":
                if s[i + 1:i + 2] == "'":
                    cur.append("'")
                    i += 2
                    continue
                quoted = False
            else:
                cur.append(c)
        elif c == "'":
            quoted, have = True, True
        elif c == '"':
            if s[i + 1:i + 2] != '"':
                raise ValueError("lone double quote in new-syntax string")
            cur.append('"')
            have = True
            i += 1
        elif c in " \t":
            if cur or have:
                out.append("".join(cur))
            cur, have = [], False
        else:
            cur.append(c)
            have = True
        i += 1
    if quoted:
        raise ValueError("unterminated single quote")
    if cur or have:
        out.append("".join(cur))
    return out


def arguments(v):
    v = v.strip()
    if v.startswith('"'):
        if not v.endswith('"') or len(v) < 2:
            raise ValueError("unterminated double-quoted arguments")
        return split_new(v[1:-1])
    if '"' in v.replace('\\"', ""):
        raise ValueError("double quote in old-syntax arguments")
    return v.replace('\\"', '"').split()


def environment(v):
    v = v.strip()
    if v.startswith('"'):
        items = split_new(v[1:-1])
    else:
        items = [x.strip() for x in v.split(";") if x.strip()]
    env = {}
    for it in items:
        k, sep, val = it.partition("=")
        if not sep:
            raise ValueError("environment entry without =: %r" % it)
        env[k] = val
    return env


UNITS = {"": None, "k": 1 / 1024, "kb": 1 / 1024, "m": 1, "mb": 1, "g": 1024, "gb": 1024, "t": 1 << 20, "tb": 1 << 20}


def size_mb(v, default_unit_mb):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", v)
    if not m or m.group(2).lower() not in UNITS:
        raise ValueError("size %r is an expression" % v)
    n = float(m.group(1))
    unit = UNITS[m.group(2).lower()] or default_unit_mb
    return int(-(-(n * unit) // 1))  # MB, rounded up


def blocks(text):
    """The submit text at each queue statement: everything before it
    (earlier queue statements left out, so later values override) and the
    queue statement, as condor_submit reads several queue statements; the
    Python Submit itself stops at the first."""
    out, acc, lines, i = [], [], text.split("\n"), 0
    while i < len(lines):
        words = lines[i].strip().split(None, 1)
        if words and words[0].lower() == "queue" and not (len(words) > 1 and words[1].startswith("=")):
            q = [lines[i]]
            while "(" in q[0] and ")" not in "\n".join(q) and i + 1 < len(lines):
                i += 1
                q.append(lines[i])
            out.append("\n".join(acc + q) + "\n")
        else:
            acc.append(lines[i])
        i += 1
    return out or [text]


def getenv_matches(value, name):
    """getenv's documented rule: true, false, or names with * wildcards."""
    v = value.strip().lower()
    if v in ("true", "yes"):
        return True
    if v in ("false", "no", ""):
        return False
    return any(fnmatch.fnmatchcase(name.lower(), p.lower()) for p in re.split(r"[,\s]+", v) if p)


def read(text):
    procs = []
    for block in blocks(text):
        read_block(block, procs)
    return {"procs": procs}


def read_block(text, procs):
    sub = htcondor2.Submit(text)
    qargs = (sub.getQArgs() or "").strip()
    count = 1
    m = re.match(r"^(\d+)\b", qargs)
    if m:
        count = int(m.group(1))
    items = list(sub.itemdata() or []) or [None]
    for idx, item in enumerate(items):
        for step in range(count):
            s = htcondor2.Submit(dict(sub))
            if item:
                for k, val in item.items():
                    s[k] = val
            s["Cluster"] = "1"
            s["ClusterId"] = "1"
            s["Process"] = str(len(procs))
            s["ProcId"] = str(len(procs))
            s["Step"] = str(step)
            s["ItemIndex"] = str(idx)
            s["Row"] = str(idx)

            def get(key, default=""):
                try:
                    return s.expand(key)
                except KeyError:
                    return default

            p = {
                "executable": get("executable"),
                "arguments": arguments(get("arguments")),
                "environment": environment(get("environment")),
                "cpus": int(get("request_cpus", "1") or "1"),
                "memory_mb": size_mb(get("request_memory", "1024") or "1024", 1),
                "disk_mb": size_mb(get("request_disk", "0") or "0", 1 / 1024),
            }
            genv = get("getenv")
            if genv:
                env = {k: v for k, v in SUBMITTER_ENV.items() if getenv_matches(genv, k)}
                env.update(p["environment"])  # environment overrides getenv
                p["environment"] = env
            procs.append(p)


def main():
    text = open(sys.argv[1]).read()
    try:
        out = read(text)
    except Exception as e:  # HTCondor (or the documented rules) refuse it
        out = {"error": "%s: %s" % (type(e).__name__, e)}
    json.dump(out, sys.stdout)


main()
