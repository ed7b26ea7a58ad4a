#!/bin/bash
# Cold rand9m (the bench's fio job) through FUSE, one fresh mount per run, readers alternating.
#   EKIMG=ek-64k.img SQIMG=sq-128k.img ./runs.sh N "label:ENV=V ...:/path/to/erofs" ... sq
# Each run: mount, drop caches, rest 3 s, touch 3 GiB of tmpfs (as --touch-mib: the VM's free page
# reporting otherwise makes runs bimodal), then fio. Prints fio's mean completion latency, the fio
# wall, the daemon's CPU and the bytes it caused to be read from disk.
# DCPU / FCPU pin the daemon / fio to a processor (taskset) when set.
# PROBE=1: also times every LZ4 decode in the daemon (entry to return, uprobes on liblz4), with
# the output size asked for (the fourth argument: a partial decode's target, a whole one's
# capacity). Once per boot, with LIBLZ4 the library the daemons load:
#   perf probe -x LIBLZ4 -a 'lz4p=LZ4_decompress_safe_partial n=%cx:s32'
#   perf probe -x LIBLZ4 -a 'lz4pr=LZ4_decompress_safe_partial%return $retval'
#   perf probe -x LIBLZ4 -a 'lz4f=LZ4_decompress_safe n=%cx:s32'
#   perf probe -x LIBLZ4 -a 'lz4fr=LZ4_decompress_safe%return $retval'
set -eo pipefail
N=$1; shift
work=$(mktemp -d); trap 'rmdir "$work"/m 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/m"; M=$work/m
pin() { if [ -n "$1" ]; then echo "taskset -c $1"; fi; }
fiorun() {
  $(pin "$FCPU") fio --name=r --filename="$1" --bs=4k --ioengine=psync --direct=0 --numjobs=1 --rw=randread \
    --io_size=9m --output-format=json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["clat_ns"]["mean"]/1000,1))'
}
for _ in $(seq "$N"); do
  line=""
  for v in "$@"; do
    IFS=: read -r label envs bin <<< "$v"
    if [ "$label" = sq ]; then $(pin "$DCPU") squashfuse "$SQIMG" "$M"; P=$(pgrep -n squashfuse)
    else env $envs $(pin "$DCPU") "$bin" mount "$EKIMG" "$M"; P=$(pgrep -n -f "mount $EKIMG"); fi
    sleep 0.3; ls "$M" >/dev/null
    sync; echo 3 > /proc/sys/vm/drop_caches; sleep 3
    dd if=/dev/zero of=/dev/shm/touch bs=1M count=3072 status=none; rm /dev/shm/touch
    c0=$(awk '{print $14+$15}' /proc/$P/stat); r0=$(awk '/read_bytes/{print $2}' /proc/$P/io)
    s=$(date +%s%N)
    if [ -n "$PROBE" ]; then
      perf record -q -e probe_liblz4:lz4p -e probe_liblz4:lz4pr__return -e probe_liblz4:lz4f -e probe_liblz4:lz4fr__return -a -o "$work/p.data" 2>/dev/null &
      rec=$!; sleep 1
    fi
    r=$(fiorun "$M/$(ls "$M")")
    if [ -n "$PROBE" ]; then kill -INT $rec; wait $rec || true; fi
    e=$(( ($(date +%s%N) - s) / 1000000 ))
    c1=$(awk '{print $14+$15}' /proc/$P/stat); r1=$(awk '/read_bytes/{print $2}' /proc/$P/io)
    umount "$M"
    line="$line | $label clat $r wall $e cpu $(( (c1 - c0) * 10 ))ms disk $(( (r1 - r0) >> 20 ))M"
    if [ -n "$PROBE" ]; then
      line="$line lz4 $(perf script -i "$work/p.data" -F tid,time,event,trace 2>/dev/null | python3 -c '
import sys
open_ = {}; calls = {}
for line in sys.stdin:
    p = line.split()
    tid, t, ev = p[0], float(p[1].rstrip(":")), p[2]
    kind = "partial" if "lz4p" in ev else "whole"
    if "return" in ev:
        if tid in open_:
            k, t0, n = open_.pop(tid)
            calls.setdefault(k, []).append((t - t0, n))
    else:
        open_[tid] = (kind, t, next((int(x.split("=")[1]) for x in p[3:] if x.startswith("n=")), 0))
for k, c in sorted(calls.items()):
    d = sorted(x[0] for x in c)
    print("%s %d mean %.1f us median %.1f out %.0f B;" % (k, len(c), sum(d) / len(d) * 1e6, d[len(d) // 2] * 1e6,
                                                        sum(x[1] for x in c) / len(c)), end=" ")')"
    fi
  done
  echo "$line"
done
