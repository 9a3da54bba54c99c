#!/usr/bin/env bash
# Records 2cpu-v7.dat (with an instance buffer) and 2cpu-noinstance-v7.dat (without one:
# trace-cmd 3.1.6 crashes on `report -F` of files with instances) with trace-cmd itself on this 2-CPU host (as root, through
# scripts/trace-cmd-record because the function-tracer files refuse opens here).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$repo/scripts/trace-cmd-record" record -q \
    -e sched -e irq -e timer \
    -e kmem:kmalloc -e kmem:mm_page_alloc -f 'order>0' \
    -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat -e syscalls:sys_enter_write \
    -B golden -e sched:sched_switch -e sched:sched_waking \
    -o "$here/2cpu-v7.dat" -- sh -c "for i in 1 2 3 4; do (ls -R /usr/share/doc/bash >/dev/null; echo x >$scratch/x\$i) & done; wait; sleep 0.05"
"$repo/scripts/trace-cmd-record" record -q \
    -e sched -e irq -e timer -e kmem:kmalloc -e syscalls:sys_enter_openat \
    -o "$here/2cpu-noinstance-v7.dat" -- sh -c "ls -R /usr/share/doc/bash >/dev/null; echo x >$scratch/y; sleep 0.02"
echo "kernel $(uname -r), $(trace-cmd --version 2>&1 | grep version)"
