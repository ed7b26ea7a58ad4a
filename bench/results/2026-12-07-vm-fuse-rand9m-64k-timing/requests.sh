#!/bin/bash
# One cold rand9m run of `erofs mount` (as runs.sh: mount, drop caches, rest 3 s, touch 3 GiB),
# counting the FUSE requests the kernel sent (tracepoint fuse:fuse_request_send) and, with
# PLACE=1, each thread's run time on each processor (sched:sched_switch).
#   EKIMG=ek-64k.img ./requests.sh /path/to/erofs [ENV=V ...]
# LOAD0=1 keeps processor 0 busy meanwhile with page-cache copies (dd of a 512 MiB tmpfs file).
set -eo pipefail
bin=$1; shift
work=$(mktemp -d); M=$work/m; mkdir "$M"
cleanup() { [ -n "$load" ] && kill "$load" 2>/dev/null; umount "$M" 2>/dev/null; rm -rf "$work" /dev/shm/load0; }
trap cleanup EXIT
env "$@" "$bin" mount "$EKIMG" "$M"; P=$(pgrep -n -f "mount $EKIMG")
sleep 0.3; ls "$M" >/dev/null
if [ -n "$LOAD0" ]; then
  dd if=/dev/urandom of=/dev/shm/load0 bs=1M count=512 status=none
  taskset -c 0 sh -c 'while :; do dd if=/dev/shm/load0 of=/dev/null bs=256k status=none; done' & load=$!
fi
sync; echo 3 > /proc/sys/vm/drop_caches; sleep 3
dd if=/dev/zero of=/dev/shm/touch bs=1M count=3072 status=none; rm /dev/shm/touch
c0=$(awk '{print $14+$15}' /proc/$P/stat)
events=(-e fuse:fuse_request_send); [ -n "$PLACE" ] && events+=(-e sched:sched_switch)
clat=$(perf record -q "${events[@]}" -a -o "$work/p.data" -- fio --name=r --filename="$M/$(ls "$M")" --bs=4k \
  --ioengine=psync --direct=0 --numjobs=1 --rw=randread --io_size=9m --output-format=json 2>/dev/null |
  python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["clat_ns"]["mean"]/1000,1))')
c1=$(awk '{print $14+$15}' /proc/$P/stat)
umount "$M"
echo "clat $clat us, daemon CPU $(( (c1 - c0) * 10 )) ms, $(perf script -i "$work/p.data" -F event 2>/dev/null | grep -c fuse_request_send) FUSE requests"
[ -z "$PLACE" ] && exit 0
perf script -i "$work/p.data" -F cpu,time,event,trace 2>/dev/null | python3 -c '
import collections, re, sys
last, run = {}, collections.defaultdict(float)
for line in sys.stdin:
    m = re.match(r"\s*\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+prev_comm=.*? next_comm=(.*?) next_pid=(\d+)", line)
    if not m: continue
    cpu, t = int(m[1]), float(m[2])
    if cpu in last:
        who, t0 = last[cpu]
        run[(who, cpu)] += t - t0
    last[cpu] = (m[3] + "/" + m[4], t)
total = collections.defaultdict(float)
for (who, cpu), v in run.items(): total[who] += v
for who in sorted(total, key=lambda w: -total[w])[:6]:
    print(f"  {who:24s} {total[who]*1e3:6.1f} ms: cpu0 {run[(who, 0)]*1e3:6.1f}, cpu1 {run[(who, 1)]*1e3:6.1f}")'
