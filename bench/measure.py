"""Running a measured command, for the bench scripts: its output, and its wall time, CPU time and
peak RSS under /usr/bin/time (which every script reads the same way)."""

import subprocess


def sh(cmd, **kw):
    return subprocess.run(cmd, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def timed(cmd, tf):
    """(wall s, cpu s, peak RSS KiB, stdout) of cmd under /usr/bin/time (its report in file tf);
    raises on failure."""
    r = sh(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf, "--"] + cmd)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stdout[-500:]}")
    e, u, s, m = open(tf).read().split()[-4:]
    return float(e), float(u) + float(s), int(m), r.stdout
