#!/usr/bin/env bash
# writeback.dat: `trace-cmd record` of the writeback events in an instance buffer while
# dd writes and syncs a file three times; writeback.perf.data: `perf record` of three of
# those events system-wide around the same workload. Their formats name kernel constants
# in `__print_flags` tables (`{I_DIRTY_SYNC, "I_DIRTY_SYNC"}`), which libtraceevent
# cannot evaluate. report.txt and script.txt are trace-cmd 3.1.6's and perf 6.1's text
# of them. Needs root, tracefs, trace-cmd and perf.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
cd "$here"
work="for i in 1 2 3; do dd if=/dev/zero of=$here/scratch bs=1M count=8 conv=fsync 2>/dev/null; rm -f $here/scratch; done"
"$repo/scripts/trace-cmd-record" record -B flagsgold -e writeback -o writeback.dat \
    sh -c "$work" >/dev/null 2>&1
trace-cmd report -i writeback.dat >report.txt 2>/dev/null
perf record -q -e 'writeback:writeback_mark_inode_dirty' -e 'writeback:writeback_dirty_inode*' \
    -a -o writeback.perf.data -- sh -c "$work" >/dev/null 2>&1
perf script -i writeback.perf.data >script.txt 2>/dev/null
