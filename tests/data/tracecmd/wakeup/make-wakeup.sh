#!/usr/bin/env bash
# Records the -w / --profile goldens' inputs with trace-cmd 3.1.6 on the 2-CPU host (as
# root, through scripts/trace-cmd-record because the function-tracer files refuse opens):
#  - sched-irq-sys.dat: sched, irq and raw_syscalls events; pipes between three
#    pipelines, and a SCHED_FIFO task that sleeps (RT wakeups);
#  - sched-only.dat: sched events only; forks and short sleeps on both CPUs, and a
#    SCHED_FIFO task (wakeups, wakeup_new, migrations);
#  - wakeup-switch.dat: only sched_wakeup and sched_switch (no sched_wakeup_new), a
#    different mix of tasks;
#  - hooks-recorded.dat: sched events with two event hooks (-H) stored in the file, which
#    trace-cmd prints on opening it and times in --profile.
# Then make-results.sh here writes results/STEM/{w,profile}.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
rec="$repo/scripts/trace-cmd-record"
"$rec" record -q -e sched -e irq -e raw_syscalls -o "$here/sched-irq-sys.dat" -- \
    sh -c 'for i in 1 2 3; do (seq 3000 | cat | wc -l >/dev/null) & done; chrt -f 10 sh -c "for i in 1 2 3 4 5; do sleep 0.002; done"; wait'
"$rec" record -q -e sched -o "$here/sched-only.dat" -- \
    sh -c 'for i in 1 2 3 4; do (sleep 0.00$i; true) & done; chrt -f 20 sh -c "sleep 0.003; sleep 0.001"; seq 20000 | gzip -c >/dev/null; wait'
"$rec" record -q -e sched:sched_wakeup -e sched:sched_switch -o "$here/wakeup-switch.dat" -- \
    sh -c 'for i in 1 2 3 4 5 6; do (echo $i | cat | cat >/dev/null) & done; wait; sleep 0.01'
"$rec" record -q -e sched -H 'sched:sched_process_fork,child_pid,child_pid/sched:sched_process_exit,pid' \
    -H 'sched_waking,pid/sched_stat_runtime,pid,g' -o "$here/hooks-recorded.dat" -- \
    sh -c 'for i in 1 2; do (seq 100 | cat > /dev/null) & done; wait'
echo "kernel $(uname -r), $(trace-cmd --version 2>&1 | grep version)"
