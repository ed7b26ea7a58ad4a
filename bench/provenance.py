"""Which commit a benchmark measured, for bench/run, bench/mkfs-compare and bench/tar-stdin.

A figure can only be traced back to the code when the measured erofs binary is exactly a commit:
built in a CMake build directory of a git tree that has no uncommitted changes (nor untracked
files git does not ignore), and built after the last change to any of that tree's sources. `erofs_commit` says whether
it is; every report records the result, and a run refuses a binary that is not exactly a commit
unless told to measure it anyway (the report then says what it was).
"""

import os
import subprocess

BUILD_INPUTS = (".c", ".cpp", ".h", ".hpp", ".in", ".cmake")


def _run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def erofs_commit(binary):
    """dict(commit=40 hex digits or None, exact=bool, text=one line for a report)."""
    build = os.path.dirname(os.path.realpath(binary))
    source = None
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    source = line.split("=", 1)[1].strip()
    except OSError:
        pass
    if not source:
        return dict(commit=None, exact=False,
                    text=f"unknown commit ({binary} is not in a CMake build directory)")
    commit = _run(["git", "-C", source, "rev-parse", "HEAD"])
    if not commit:
        return dict(commit=None, exact=False, text=f"unknown commit ({source} is not a git tree)")
    why = []
    # (benchmark results are data, not code: a run in progress writes below bench/results)
    changes = _run(["git", "-C", source, "status", "--porcelain", "--", ".", ":!bench/results"])
    if changes is None or changes:
        why.append("the tree has uncommitted changes")
    # Built after the last change to any file the build reads (a checkout of another commit
    # touches the files it changes): `ninja -n` cannot tell, its glob check always plans a step.
    listed = _run(["git", "-C", source, "ls-files", "-z"]) or ""
    inputs = [os.path.join(source, p) for p in listed.split("\0")
              if p.endswith(BUILD_INPUTS) or os.path.basename(p) == "CMakeLists.txt"]
    built = os.stat(binary).st_mtime
    newer = [p for p in inputs if os.path.exists(p) and os.stat(p).st_mtime > built]
    if newer:
        why.append(f"the binary is older than {len(newer)} of its sources, e.g. "
                   f"{os.path.relpath(newer[0], source)}")
    text = commit + (" (" + "; ".join(why) + ")" if why else " (clean tree, binary up to date)")
    return dict(commit=commit, exact=not why, text=text)


def require_exact(prov, allowed, tool):
    """Exits unless the binary is exactly a commit or `allowed` (--allow-dirty)."""
    if not prov["exact"] and not allowed:
        raise SystemExit(f"{tool}: the erofs binary is not exactly a commit: {prov['text']}. "
                         "Commit and rebuild, or pass --allow-dirty to measure it anyway "
                         "(the report says so).")
