#!/bin/bash
# Cold random reads of the image file itself, no FUSE: fio's mean and median completion latency
# for 2,304 reads of each size, pinned to each processor, through the page cache with
# POSIX_FADV_RANDOM (no read-ahead), ROUNDS times, caches dropped before each.
#   ./raw-reads.sh IMAGE [ROUNDS]
set -eo pipefail
img=$1; rounds=${2:-3}
for _ in $(seq "$rounds"); do
  for bs in 24k 40k 64k; do
    for cpu in 0 1; do
      sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
      printf "%s cpu%s %s\n" "$bs" "$cpu" "$(taskset -c "$cpu" fio --name=r --filename="$img" --bs="$bs" --ioengine=psync \
        --direct=0 --fadvise_hint=random --rw=randread --number_ios=2304 --io_size=2000m --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["jobs"][0]["read"]["clat_ns"]; print(round(r["mean"]/1000,1), round(r["percentile"]["50.000000"]/1000,1))')"
    done
  done
done
