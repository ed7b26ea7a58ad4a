"""Running a measured command, for the bench scripts: its output, and its wall time, CPU time and
peak RSS under /usr/bin/time (which every script reads the same way)."""

import subprocess


def sh(cmd, **kw):
    return subprocess.run(cmd, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def run_timed(cmd, tf, stdin=None):
    """(wall s, cpu s, peak RSS KiB, output, exit status) of cmd under /usr/bin/time (its report in
    file tf); stdin as subprocess.run takes it."""
    r = sh(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf, "--"] + cmd, stdin=stdin)
    e, u, s, m = open(tf).read().split()[-4:]
    return float(e), float(u) + float(s), int(m), r.stdout, r.returncode


def timed(cmd, tf, stdin=None):
    """run_timed's figures and output; raises on failure."""
    wall, cpu, rss, out, rc = run_timed(cmd, tf, stdin)
    if rc != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({rc}): {out[-500:]}")
    return wall, cpu, rss, out
