"""What the bench scripts share: running a measured command (its output, and its wall time, CPU
time and peak RSS under /usr/bin/time, which every script reads the same way), and removing what
a run left behind."""

import os
import shutil
import subprocess


def remove_path(path, ignore_errors=False):
    """Removes a directory tree or a file: an extractor that fails may leave its destination a
    file (fsck.erofs 1.9.3 does on some fragments images), which rmtree alone would leave in place
    for every extractor after it."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=ignore_errors)
    elif os.path.lexists(path):
        os.unlink(path)


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
