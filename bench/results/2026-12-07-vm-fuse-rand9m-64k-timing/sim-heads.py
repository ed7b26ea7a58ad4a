#!/usr/bin/env python3
# Decoded bytes of 2,304 random 4 KiB reads over the model's pclusters (sizes.txt, one decoded size
# a line, as `DUMP=1 ./lz4-model` writes it): as the daemon decodes now, with every decoded head
# kept, and with decodes resumed where a kept head ends.
import bisect
import random

sizes = [int(x) for x in open("sizes.txt")]
starts = [0]
for s in sizes:
    starts.append(starts[-1] + s)
for seed in (1, 2, 3):
    random.seed(seed)
    now = kept = resumed = 0
    heads = {}
    for _ in range(2304):
        off = random.randrange(starts[-1] - 4096)
        k = bisect.bisect_right(starts, off) - 1
        end = min(off - starts[k] + 4096, sizes[k])
        now += end
        have = heads.get(k, 0)
        if end > have:
            kept += end
            resumed += end - have
            heads[k] = end
    print(f"seed {seed}: {now / 2304 / 1e3:.0f} KB a read now; kept heads {kept / now:.3f} of it; "
          f"resumed {resumed / now:.3f}; heads held {sum(heads.values()) / 1e6:.0f} MB")
