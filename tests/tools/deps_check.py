#!/usr/bin/env python3
"""deps_check.py: every program and Python module the tests use comes from
a Debian package that scripts/deps.sh installs (or one every Debian has).

    python3 tests/tools/deps_check.py ROOT

Scans the shell scripts of tests/ and scripts/ for the programs they run
(words in command position, after `timeout N`, `env`, `exec`, `command -v`),
the C unit tests for the programs they start (system, popen, execlp), and
every Python file a test runs, plus the Python inside shell scripts
(`python3 -c '...'`, `python3 - <<EOF`), for the modules it imports.
Each program is looked up on PATH and each module with importlib, and the
file mapped to its package with `dpkg -S`. Allowed: the packages of
`sh scripts/deps.sh --list` with everything they depend on (as installed
here), and the packages a minimal Debian always has (Essential or
Priority: required: what debootstrap's minbase installs).

Prints one line per program or module checked, "ok" or "FAIL" with why,
then "N passed, N failed" (tests/run.sh's result line); exits 1 on a
failure. Without dpkg it prints a SKIP line.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys

SH_WORDS = set("""
. : [ [[ alias bg break case cd command continue do done echo elif else esac eval exec exit
export false fc fg fi for function getopts hash if in jobs kill let local printf pwd read
readonly return set shift test then times trap true type ulimit umask unalias unset until
wait while { } ! time select
""".split())
# run their arguments as a command: the next word is a program too
WRAPPERS = {"timeout", "env", "exec", "nohup", "sudo", "xargs", "nice", "setsid", "unshare", "command"}
CMD_START = re.compile(r"(?:^|[;&|(`]|\$\(|\bthen\b|\bdo\b|\belse\b|\bif\b|\bwhile\b|\buntil\b|!)\s*")
PROG = re.compile(r"^[A-Za-z_][A-Za-z0-9_.+-]*$")
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def strip_quotes(text, i=0, stop=None):
    """Shell text with comments and the insides of quoted strings removed
    (python -c bodies, awk programs, messages), but the command
    substitutions inside double quotes kept: they run commands. Returns
    (text, index after the `stop` character)."""
    out, n = [], len(text)
    while i < n:
        c = text[i]
        if c == stop:
            return "".join(out), i + 1
        if c == "\\" and i + 1 < n:
            out.append(text[i:i + 2]); i += 2; continue
        if c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            out.append("''" + "\n" * text.count("\n", i, j)); i = j + 1; continue
        if c == '"':
            out.append('"'); i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 2
                elif text.startswith("$(", i):
                    inner, i = strip_quotes(text, i + 2, ")")
                    out.append("$(" + inner + ")")
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
            out.append('"'); i += 1; continue
        if text.startswith("$(", i):
            inner, i = strip_quotes(text, i + 2, ")")
            out.append("$(" + inner + ")"); continue
        if text.startswith("${", i):   # ${X:?message; with words}
            j = text.find("}", i)
            i = n if j < 0 else j + 1
            out.append("$X"); continue
        if c == "(" and stop == ")":
            inner, i = strip_quotes(text, i + 1, ")")
            out.append("(" + inner + ")"); continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        out.append(c); i += 1
    return "".join(out), n


def heredocs(text):
    """(opener line, body) of every here-document; the bodies are cut out."""
    found, lines, out, k = [], text.split("\n"), [], 0
    while k < len(lines):
        line = lines[k]
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        out.append(line)
        k += 1
        if m:
            body = []
            while k < len(lines) and lines[k].strip() != m.group(1):
                body.append(lines[k]); k += 1
            k += 1
            out.extend([""] * (len(body) + 1))
            found.append((line, "\n".join(body)))
    return found, "\n".join(out)


def shell_programs(text):
    funcs = set(re.findall(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(\)", text, re.M))
    progs = set()
    # $((arithmetic)) runs nothing
    for line in re.sub(r"\$\(\([^()]*(\([^()]*\)[^()]*)*\)\)", "0", strip_quotes(text)[0]).split("\n"):
        for m in CMD_START.finditer(line):
            words = line[m.end():].split()
            while words and ASSIGN.match(words[0]) and "(" not in words[0]:
                words.pop(0)
            if words and ASSIGN.match(words[0]):
                continue   # x=$(cmd ...): the command is matched at its "$("
            while words:
                w = words.pop(0).strip('"')
                if not PROG.match(w) or w in SH_WORDS - {"command"} or w in funcs:
                    break
                progs.add(w)
                if w not in WRAPPERS:
                    break
                # skip the wrapper's options and numbers (timeout 30, command -v)
                while words and (words[0].startswith("-") or words[0][:1].isdigit()
                                 or ASSIGN.match(words[0])):
                    words.pop(0)
    return progs - {"command"}, funcs


def c_programs(text):
    progs = set()
    for m in re.finditer(r'execlp\("([^"]+)"', text):
        progs.add(m.group(1))
    for m in re.finditer(r'(?:system|popen|snprintf\(cmd,[^,]+,)\s*\(?\s*"([^"]*)', text):
        for part in re.split(r"&&|\|\||;|\|", re.sub(r"'[^']*('|$)", "''", m.group(1))):
            w = part.split()[:1]
            if w and PROG.match(w[0]) and w[0] not in SH_WORDS:
                progs.add(w[0])
    return progs


def py_modules(src):
    """The import statements of src, as "import X" or "from X import Y"."""
    mods = set()
    for m in re.finditer(r"^\s*from\s+([\w.]+)\s+import\s+\(?\s*(\w+)", src, re.M):
        mods.add("from %s import %s" % (m.group(1), m.group(2)))
    for m in re.finditer(r"(?:^|;)\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)", src, re.M):
        for name in m.group(1).split(","):
            mods.add("import " + name.strip().split()[0])
    return mods


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout


def allowed_packages(root):
    status = sh("dpkg-query", "-W", "-f=${Package}\t${Priority}\t${Essential}\t${Depends}, "
                "${Pre-Depends}\t${Provides}\t${db:Status-Abbrev}\n")
    deps, provides, base = {}, {}, set()
    for line in status.splitlines():
        f = line.split("\t")
        if len(f) < 6 or not f[5].startswith("ii"):
            continue
        deps[f[0]] = [[a.split()[0].split(":")[0] for a in alt.split("|") if a.strip()]
                      for alt in f[3].split(",") if alt.strip()]
        for p in f[4].split(","):
            if p.strip():
                provides.setdefault(p.split()[0], []).append(f[0])
        if f[1] == "required" or f[2] == "yes":
            base.add(f[0])
    listed = sh("sh", os.path.join(root, "scripts/deps.sh"), "--list").split()
    seen, todo = set(), list(base) + listed
    while todo:
        p = todo.pop()
        for name in [p] if p in deps else provides.get(p, []):
            if name not in seen:
                seen.add(name)
                for alts in deps[name]:
                    todo.extend(alts)
    return seen, listed


OWNER = {}   # file -> allowed package, from dpkg's file lists (dpkg -S is slow)


def load_owners(allowed):
    info = "/var/lib/dpkg/info"
    names = os.listdir(info) if os.path.isdir(info) else []
    for n in names:
        pkg = n[:-5].split(":")[0]
        if n.endswith(".list") and pkg in allowed:
            with open(os.path.join(info, n), encoding="utf-8", errors="replace") as fh:
                for f in fh.read().splitlines():
                    OWNER.setdefault(f, pkg)


def package_of(path):
    """The package that ships path (tried as given, resolved, and /usr-merged):
    an allowed one from OWNER, else whatever dpkg -S says."""
    cands = [path, os.path.realpath(path)]
    for p in list(cands):
        q = p[4:] if p.startswith("/usr/") else "/usr" + p
        cands.append(q)
    for p in cands:
        if p in OWNER:
            return OWNER[p]
    for p in list(cands):
        if p.startswith("/usr/"):
            cands.append(p[4:])
        else:
            cands.append("/usr" + p)
    for p in cands:
        out = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            pkg, _, f = line.partition(": ")
            if f.strip() == p and "diversion" not in pkg:
                return pkg.split(",")[0].split(":")[0].strip()
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    if not shutil.which("dpkg"):
        print("SKIP deps_check: no dpkg: not a Debian system")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    shells, pyfiles, cfiles = [], [], []
    for d in ("tests", "scripts"):
        for dp, dn, fn in os.walk(os.path.join(root, d)):
            dn[:] = [x for x in dn if x not in ("node_modules", "fuzz")]
            for f in fn:
                p = os.path.join(dp, f)
                if f.endswith(".sh") or f == "run":
                    shells.append(p)
                elif f.endswith(".py"):
                    pyfiles.append(p)
                elif f.endswith(".c"):
                    cfiles.append(p)
    if os.path.exists(os.path.join(root, ".ci/run")):
        shells.append(os.path.join(root, ".ci/run"))
    # clean-env.sh runs on the host that builds the chroot, not in it
    shells = [p for p in shells if not p.endswith("scripts/clean-env.sh")]
    texts = {p: open(p, encoding="utf-8", errors="replace").read() for p in shells + cfiles}
    progs, funcs, pysrc = {}, set(), []
    for p in shells:
        docs, rest = heredocs(texts[p])
        for opener, body in docs:
            if re.search(r"python3?\s+-", opener):
                pysrc.append((p, body))
        pr, fu = shell_programs(rest)
        funcs |= fu
        for m in re.finditer(r"python3? -c '([^']*)'", rest):
            pysrc.append((p, m.group(1)))
        for w in pr:
            progs.setdefault(w, os.path.relpath(p, root))
    for p in cfiles:
        for w in c_programs(texts[p]):
            progs.setdefault(w, os.path.relpath(p, root))
        for m in re.finditer(r"python3 -c '([^']*)", texts[p]):
            pysrc.append((p, m.group(1)))
    # Python files a test or script runs (a generator run by hand is not)
    used = "\n".join(texts[p] for p in shells)
    used += "\n".join(m.group(0) for p in cfiles for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"', texts[p]))
    local = {os.path.splitext(os.path.basename(p))[0] for p in pyfiles}
    local |= {"linearize", "extract_turns"}   # ../shared's reference extractors
    for p in pyfiles:
        if os.path.basename(p) in used:
            pysrc.append((p, open(p, encoding="utf-8").read()))

    allowed, listed = allowed_packages(root)
    load_owners(allowed)
    passed = failed = 0
    for w in sorted(progs):
        if w in funcs or w in ("cairn",) or w.startswith("t_") or w.startswith("test_"):
            continue
        path = shutil.which(w)
        pkg = package_of(path) if path else None
        if pkg and pkg in allowed:
            passed += 1
            print("ok   program %-14s %s" % (w, pkg))
        else:
            failed += 1
            why = "not on PATH" if not path else ("%s is in no package" % path if not pkg
                                                  else "from %s, which deps.sh does not install" % pkg)
            print("FAIL program %-14s (%s): %s" % (w, progs[w], why))
    mods = {}
    for p, src in pysrc:
        for m in py_modules(src):
            mods.setdefault(m, os.path.relpath(p, root))
    seen_tops = set()
    for stmt in sorted(mods):
        m = stmt.split()[1]
        if m.split(".")[0] in local or m.startswith("."):
            continue
        # importing it shows what it needs in turn (sentencepiece's
        # model_pb2 needs google.protobuf, not a dependency of the package)
        probe = ("import sys; before = set(sys.modules)\n" + stmt + "\n"
                 "for k in sorted(set(sys.modules) - before):\n"
                 "    f = getattr(sys.modules[k], '__file__', None)\n"
                 "    f and print(k, f)")
        r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        try:
            spec = importlib.util.find_spec(m)
        except (ImportError, ValueError):
            spec = None
        if r.returncode == 0:
            # and every module it loaded in turn
            for line in r.stdout.splitlines():
                k, _, f = line.partition(" ")
                top = k.split(".")[0]
                if top in seen_tops:
                    continue
                seen_tops.add(top)
                pk = package_of(f)
                if not pk or pk not in allowed:
                    failed += 1
                    print("FAIL module  %-14s (%s): `%s` loads %s (%s), %s" % (
                        m, mods[stmt], stmt, k, f, "from %s, which deps.sh does not install" % pk
                        if pk else "in no package"))
        if r.returncode != 0:
            failed += 1
            err = (r.stderr.strip().splitlines() or ["?"])[-1]
            print("FAIL module  %-14s (%s): `%s`: %s" % (m, mods[stmt], stmt, err))
            continue
        if spec and spec.origin in ("built-in", "frozen"):
            passed += 1
            print("ok   module  %-14s built into python3" % m)
            continue
        pkg = package_of(spec.origin) if spec and spec.origin else None
        if pkg and pkg in allowed:
            passed += 1
            print("ok   module  %-14s %s" % (m, pkg))
        else:
            failed += 1
            print("FAIL module  %-14s (%s): from %s, which deps.sh does not install" % (m, mods[stmt], pkg))
    print("deps.sh lists %d packages; with their dependencies and the base system: %d"
          % (len(listed), len(allowed)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
