#!/usr/bin/env python3
"""Safety mutants for the Java code: the counterpart of the model's mutants (model/transfer.pml).

Each mutation in mutations.tsv removes or weakens one safety rule. For each one, this script copies the tree
(tracked and untracked files, never target/ or anything git ignores) to a scratch directory, applies the
mutation there, runs ONLY the tests named for it with its own ports, and reads the surefire reports:

  CAUGHT        a named test failed on an assertion (a <failure> whose type is an assertion error)
  NOT CAUGHT    every named test passed (or was skipped): no test protects the rule
  TIMEOUT       no assertion failed, but a named test failed by waiting in vain (an Awaitility
                ConditionTimeoutException, any other *TimeoutException), or the run outlived --timeout
  ERROR         no assertion failed, and a named test errored otherwise, the build failed, or a named
                test never ran
  STALE PATTERN the text to find does not occur exactly once (within its scope), or a later migration repeats
                it (it redefines the trigger or function, so the earlier text no longer runs): the code moved
                on and the mutation must be updated; it is never silently skipped

How an assertion is told from a timeout: JUnit 5 reports a failed assertion as an
org.opentest4j.AssertionFailedError (or java.lang.AssertionError / MultipleFailuresError), which surefire writes
as <failure>; an Awaitility wait that ran out throws org.awaitility.core.ConditionTimeoutException, an ordinary
RuntimeException, which surefire writes as <error>. A testcase counts as a timeout when the type or the first
line of the message of its <failure> or <error> names a TimeoutException, whatever the element, so an assertion
wrapped around a timeout is not taken for a catch.

Exit status: 0 only if every mutation run was CAUGHT (or, with --baseline, every named test passed).

  service/src/test/mutants/run.py                  # every mutation, then the table
  service/src/test/mutants/run.py NAME [NAME...]   # only these
  service/src/test/mutants/run.py --baseline       # the unmutated tree once, every named test must pass
  service/src/test/mutants/run.py --check          # only check that every pattern still matches exactly once
  service/src/test/mutants/run.py --list           # the mutations and their tests

A mutant whose run ended in TIMEOUT or ERROR is run once more (--retries): on a loaded machine a test can fail
on an infrastructure timeout of its own (a Redis answer later than 250 ms) that says nothing about the mutant.
Both runs' seconds are counted.

Python 3.8+ and the standard library only. The build is ./mvnw -o (offline).
"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))  # the reactor: mutations name files from here

ASSERTION_TYPES = ("org.opentest4j.AssertionFailedError", "java.lang.AssertionError",
                   "org.opentest4j.MultipleFailuresError", "junit.framework.AssertionFailedError",
                   "junit.framework.ComparisonFailure")
TIMEOUT_RE = re.compile(r"\b[\w.$]*TimeoutException\b")

ORDER = ["STALE PATTERN", "ERROR", "TIMEOUT", "NOT CAUGHT", "CAUGHT"]


class Mutation:
    def __init__(self, name, path, within, find, replace, tests, line):
        self.name, self.path, self.within, self.find, self.replace = name, path, within, find, replace
        self.tests, self.line = tests, line


def unescape(text):
    """\\n, \\t and \\\\ in a field of mutations.tsv; everything else is literal."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def load_mutations(path):
    mutations, names = [], set()
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 6:
                sys.exit(f"mutations.tsv:{number}: expected 6 tab-separated fields "
                         f"(name, file, within, find, replace, tests), got {len(fields)}")
            name, path, within, find, replace, tests = (x.strip() if i in (0, 1, 5) else x
                                                         for i, x in enumerate(fields))
            if name in names:
                sys.exit(f"mutations.tsv:{number}: mutation {name} is listed twice")
            names.add(name)
            mutations.append(Mutation(name, path, None if within.strip() == "-" else unescape(within),
                                      unescape(find), unescape(replace), tests, number))
    return mutations


def region(text, within):
    """(start, end) of the scope: the whole file, or from the one occurrence of `within` to the next blank line."""
    if within is None:
        return 0, len(text), None
    n = text.count(within)
    if n != 1:
        return None, None, f"scope {within!r} occurs {n} times, not once"
    start = text.index(within)
    blank = re.compile(r"\n[ \t]*\n").search(text, start)
    return start, (blank.start() if blank else len(text)), None


def mutate(text, m):
    """The mutated text, or (None, why the pattern is stale)."""
    start, end, problem = region(text, m.within)
    if problem:
        return None, problem
    n = text.count(m.find, start, end)
    if n != 1:
        where = "in the file" if m.within is None else f"in the scope of {m.within!r}"
        return None, f"{m.find!r} occurs {n} times {where}, not once"
    at = text.index(m.find, start, end)
    return text[:at] + m.replace + text[at + len(m.find):], None


MIGRATION = re.compile(r"V(\d+)__[^/]*\.sql$")


def superseded(m, root=ROOT):
    """The later migration that repeats a migration mutation's text, or None. A later migration that defines the same
    trigger or function again is what the database runs, so mutating the earlier one would change nothing."""
    own = MIGRATION.search(m.path)
    if not own:
        return None
    folder = os.path.join(root, os.path.dirname(m.path))
    for name in sorted(os.listdir(folder)):
        later = MIGRATION.search(name)
        if later and int(later.group(1)) > int(own.group(1)):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                if m.find in f.read():
                    return name
    return None


def check(m, root=ROOT):
    path = os.path.join(root, m.path)
    if not os.path.isfile(path):
        return None, f"{m.path} does not exist"
    later = superseded(m, root)
    if later:
        return None, f"{later} repeats {m.find!r}: it redefines what {m.path} defined, so mutate it there"
    with open(path, encoding="utf-8") as f:
        return mutate(f.read(), m)


def parse_tests(spec):
    """'A#m1+m2,B' -> {'A': {'m1', 'm2'}, 'B': None} (None: every test of the class)."""
    tests = {}
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        cls, _, methods = part.partition("#")
        if not methods:
            tests[cls] = None
        elif cls not in tests or tests[cls] is not None:
            tests.setdefault(cls, set()).update(x for x in methods.split("+") if x)
    return tests


def spec_of(tests):
    return ",".join(cls if methods is None else cls + "#" + "+".join(sorted(methods))
                    for cls, methods in tests.items())


def snapshot(dest):
    """
    Tracked and untracked files that git does not ignore (so never target/), as they are in the tree now. Taken
    once per run, and every scratch copy is made from it: edits to the tree while the run goes on reach no mutant.
    """
    if os.path.exists(dest):
        shutil.rmtree(dest)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode("utf-8").split("\0")
    for rel in filter(None, listed):
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src):
            continue  # deleted in the work tree but not yet in the index
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(src, target)


def scratch_copy(source, dest):
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(source, dest, symlinks=True)


def run_maven(tree, tests, args, log_path):
    """Runs the named tests in `tree`; (exit code or None on timeout, seconds)."""
    # the whole reactor, so that a named test runs in whichever module holds it (a test that never ran is an ERROR
    # below, so no module needs to fail for lack of one)
    command = ["./mvnw", "-o", "-q", "test", "-Dtest=" + spec_of(tests),
               "-Dsurefire.failIfNoSpecifiedTests=false",
               f"-Dquarkus.http.test-port={args.http_port}", f"-Dquarkus.management.test-port={args.management_port}",
               # no npm (the TypeScript SDK is no mutant's business), and no Quarkus code generation: the project has
               # no generator (gRPC, Avro, ...), and the step costs half a minute twice per build on a busy machine
               "-Dclients.typescript.skip=true"] + ([] if args.full_build else ["-Dquarkus.generate-code.skip=true"])
    started = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        process = subprocess.Popen(command, cwd=tree, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            # the build and its forked test JVM share the process group this script started
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            code = None
    return code, time.monotonic() - started


def report_dirs(tree):
    """The surefire reports of every module of the reactor."""
    return sorted(d for d in glob.glob(os.path.join(tree, "**", "target", "surefire-reports"), recursive=True)
                  if "node_modules" not in d)


def testcases(tree):
    """Every testcase in the surefire reports: (class simple name, method, verdict, detail)."""
    cases = []
    for reports in report_dirs(tree):
        cases.extend(module_testcases(reports))
    return cases


def module_testcases(reports):
    cases = []
    for name in sorted(os.listdir(reports)):
        if not (name.startswith("TEST-") and name.endswith(".xml")):
            continue
        try:
            root = ET.parse(os.path.join(reports, name)).getroot()
        except ET.ParseError as e:
            cases.append((name, "?", "error", f"unreadable report: {e}"))
            continue
        for case in root.iter("testcase"):
            cls = case.get("classname", "").rsplit(".", 1)[-1]
            method = re.sub(r"\(.*\)$", "", case.get("name", ""))
            cases.append((cls, method) + verdict(case))
    return cases


def verdict(case):
    for kind in ("failure", "error"):
        for element in case.findall(kind):
            kind_type = element.get("type", "")
            message = (element.get("message") or (element.text or "").strip()).splitlines()
            first = message[0] if message else ""
            detail = f"{kind_type.rsplit('.', 1)[-1]}: {first}"[:160]
            if TIMEOUT_RE.search(kind_type) or TIMEOUT_RE.search(first):
                return "timeout", detail
            if kind == "failure" and kind_type in ASSERTION_TYPES:
                return "assertion", detail
            return "error", detail
    if case.find("skipped") is not None:
        return "skipped", ""
    return "passed", ""


def named(cases, tests):
    """The testcases that belong to the named tests, and the named tests that never ran."""
    mine = [c for c in cases if c[0] in tests and (tests[c[0]] is None or c[1] in tests[c[0]])]
    missing = []
    for cls, methods in tests.items():
        ran = {c[1] for c in mine if c[0] == cls}
        if methods is None:
            if not ran:
                missing.append(cls)
        else:
            missing.extend(f"{cls}#{m}" for m in sorted(methods - ran))
    return mine, missing


def classify(code, cases, missing):
    """(result, detail) of one mutant run."""
    caught = [c for c in cases if c[2] == "assertion"]
    if caught:
        return "CAUGHT", f"{caught[0][0]}#{caught[0][1]}: {caught[0][3]}"
    if code is None:
        return "TIMEOUT", "the run outlived --timeout and was stopped"
    timeouts = [c for c in cases if c[2] == "timeout"]
    if timeouts:
        return "TIMEOUT", f"{timeouts[0][0]}#{timeouts[0][1]}: {timeouts[0][3]}"
    errors = [c for c in cases if c[2] == "error"]
    if errors:
        return "ERROR", f"{errors[0][0]}#{errors[0][1]}: {errors[0][3]}"
    if missing:
        return "ERROR", "never ran: " + ", ".join(missing)
    if code != 0:
        return "ERROR", f"the build failed (exit {code}) with every named test passing: see the log"
    return "NOT CAUGHT", f"{len(cases)} test(s) passed"


def keep_evidence(tree, out, name):
    """
    The build log, the service's log and the surefire reports outlive the scratch tree: <work>/<name>.log,
    <work>/<name>-quarkus.log and <work>/<name>-reports/.
    """
    shutil.copy2(os.path.join(tree, "mutant.log"), os.path.join(out, name + ".log"))
    # one log per test JVM: quarkus-test.log-fork1, -fork2 and -fork3 when all three parts ran
    for service_log in sorted(glob.glob(os.path.join(tree, "service", "target", "quarkus-test.log*"))):
        suffix = os.path.basename(service_log)[len("quarkus-test.log"):]
        shutil.copy2(service_log, os.path.join(out, name + "-quarkus" + suffix + ".log"))
    dest = os.path.join(out, name + "-reports")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    for reports in report_dirs(tree):
        module = os.path.relpath(reports, tree).split(os.sep)[0]
        shutil.copytree(reports, os.path.join(dest, module), ignore=shutil.ignore_patterns("*-output.txt"))


def table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def run_mutants(mutations, args):
    os.makedirs(args.work, exist_ok=True)
    source = os.path.join(args.work, ".source")
    snapshot(source)
    rows, started = [], time.monotonic()
    for i, m in enumerate(mutations, 1):
        print(f"[{i}/{len(mutations)}] {m.name}: {m.tests}", flush=True)
        tests = parse_tests(m.tests)
        mutated, stale = check(m, source)
        if stale:
            rows.append((m.name, m.tests, "STALE PATTERN", 0, f"{m.path}: {stale}"))
            print(f"    STALE PATTERN: {stale}", flush=True)
            continue
        seconds = 0
        for attempt in range(1 + args.retries):
            tree = os.path.join(args.work, m.name)
            scratch_copy(source, tree)
            with open(os.path.join(tree, m.path), "w", encoding="utf-8") as f:
                f.write(mutated)
            code, took = run_maven(tree, tests, args, os.path.join(tree, "mutant.log"))
            seconds += took
            mine, missing = named(testcases(tree), tests)
            result, detail = classify(code, mine, missing)
            keep_evidence(tree, args.work, m.name)
            if not args.keep:
                shutil.rmtree(tree)
            print(f"    {result} in {took:.0f} s: {detail}", flush=True)
            if result in ("CAUGHT", "NOT CAUGHT"):
                break
            # an error or a timeout may be the machine's (a Redis answer later than its timeout on a loaded box)
        if attempt:
            detail += f" (run {attempt + 1} of {1 + args.retries})"
        rows.append((m.name, m.tests, result, round(seconds), detail))
    total = time.monotonic() - started
    print()
    print(table([r[:4] for r in rows], ("mutation", "tests", "result", "seconds")))
    print()
    for r in rows:
        print(f"{r[0]}: {r[4]}")
    caught = sum(1 for r in rows if r[2] == "CAUGHT")
    print(f"\n{caught} of {len(rows)} caught, {total:.0f} s in all ({total / 60:.1f} min); logs and reports in {args.work}")
    shutil.rmtree(source)
    return 0 if caught == len(rows) else 1


def run_baseline(mutations, args):
    """The unmutated tree once, with every test any mutation names: each must pass."""
    tests = {}
    for m in mutations:
        for cls, methods in parse_tests(m.tests).items():
            if cls in tests and tests[cls] is None:
                continue
            tests[cls] = None if methods is None else (tests.get(cls) or set()) | methods
    os.makedirs(args.work, exist_ok=True)
    tree = os.path.join(args.work, "baseline")
    print(f"baseline: the unmutated tree with {spec_of(tests)}", flush=True)
    snapshot(tree)
    code, seconds = run_maven(tree, tests, args, os.path.join(tree, "mutant.log"))
    mine, missing = named(testcases(tree), tests)
    keep_evidence(tree, args.work, "baseline")
    if not args.keep:
        shutil.rmtree(tree)
    rows = [(f"{c[0]}#{c[1]}", c[2], c[3]) for c in mine] + [(t, "never ran", "") for t in missing]
    print(table(rows, ("test", "result", "detail")))
    ok = code == 0 and not missing and all(c[2] == "passed" for c in mine)
    print(f"\nbaseline {'passed' if ok else 'FAILED'}: {len(mine)} test(s) in {seconds:.0f} s "
          f"(maven exit {code}); log in {os.path.join(args.work, 'baseline.log')}")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="mutations to run (default: all)")
    parser.add_argument("--baseline", action="store_true", help="run the named tests once on the unmutated tree")
    parser.add_argument("--check", action="store_true", help="only check that every pattern matches exactly once")
    parser.add_argument("--list", action="store_true", help="list the mutations")
    parser.add_argument("--http-port", type=int, default=int(os.environ.get("MUTANTS_HTTP_PORT", 8891)))
    parser.add_argument("--management-port", type=int, default=int(os.environ.get("MUTANTS_MANAGEMENT_PORT", 9811)))
    parser.add_argument("--timeout", type=int, default=int(os.environ.get("MUTANTS_TIMEOUT", 1200)),
                        help="seconds one mutant's build and tests may take (default 1200)")
    parser.add_argument("--work", default=os.environ.get("MUTANTS_WORK",
                                                         os.path.join("/tmp", f"ledgerline-mutants-{os.getuid()}")),
                        help="scratch directory for the copies, logs and reports")
    parser.add_argument("--keep", action="store_true", help="keep each scratch tree (with its target/)")
    parser.add_argument("--retries", type=int, default=1,
                        help="runs again a mutant whose result was TIMEOUT or ERROR, up to this many times (default 1)")
    parser.add_argument("--full-build", action="store_true", help="do not skip Quarkus's code generation step")
    parser.add_argument("--mutations", default=os.path.join(HERE, "mutations.tsv"),
                        help="the list of mutations (default: mutations.tsv next to this script)")
    args = parser.parse_args()

    mutations = load_mutations(args.mutations)
    if args.names:
        unknown = set(args.names) - {m.name for m in mutations}
        if unknown:
            sys.exit("unknown mutation(s): " + ", ".join(sorted(unknown)))
        mutations = [m for m in mutations if m.name in args.names]
    if args.list:
        print(table([(m.name, m.path.rsplit("/", 1)[-1], m.tests) for m in mutations], ("mutation", "file", "tests")))
        return 0
    if args.check:
        stale = [(m.name, problem) for m in mutations for _, problem in [check(m)] if problem]
        for name, problem in stale:
            print(f"STALE PATTERN {name}: {problem}")
        print(f"{len(mutations) - len(stale)} of {len(mutations)} patterns match exactly once")
        return 1 if stale else 0
    if args.baseline:
        return run_baseline(mutations, args)
    return run_mutants(mutations, args)


if __name__ == "__main__":
    sys.exit(main())
