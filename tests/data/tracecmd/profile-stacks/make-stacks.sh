#!/usr/bin/env bash
# Records the inputs of the `report --profile` stack goldens with trace-cmd 3.1.6 on the
# 2-CPU host (as root, on the top-level buffer: hold /tmp/tracefs-top.lock; through
# scripts/trace-cmd-record because the function-tracer files refuse opens):
#  - triggers.dat: what `trace-cmd profile` records without the function tracer:
#    sched_switch and sched_wakeup with a stacktrace trigger, irq, raw_syscalls and
#    sched_process_exec; pipelines on both CPUs and a SCHED_FIFO task that sleeps;
#  - stacktrace-option.dat: `-T` (options/stacktrace): a kernel stack after every sched
#    event; forks, short sleeps and a gzip.
# Then make-results.sh here writes results/STEM/MODE.txt.zst.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
rec="$repo/scripts/trace-cmd-record"
"$rec" record -q -e sched:sched_switch -R stacktrace -e sched:sched_wakeup -R stacktrace \
    -e irq -e raw_syscalls -e sched:sched_process_exec -o "$here/triggers.dat" -- \
    sh -c 'for i in 1 2 3; do (seq 3000 | cat | wc -l >/dev/null) & done; chrt -f 10 sh -c "for i in 1 2 3; do sleep 0.002; done"; wait'
"$rec" record -q -T -e sched -o "$here/stacktrace-option.dat" -- \
    sh -c 'for i in 1 2 3; do (sleep 0.00$i) & done; seq 3000 | gzip -c >/dev/null; wait'
echo "kernel $(uname -r), $(trace-cmd --version 2>&1 | grep version)"
