#!/bin/sh
# Records the mid-size corpus for benches/compare-report.sh: two trace.dat files of about
# 200k and 300k events, dominated by kmem:kmalloc/kfree (call_site printed with %pS, gfp
# flags), raw_syscalls, syscalls openat, ext4 extent lookups and filemap, recorded with
# trace-cmd while `cat` reads a few thousand files from a cold page cache:
#   benches/report-corpus.sh DIR          # writes DIR/mid200.dat and DIR/mid280.dat
#   benches/compare-report.sh DIR/mid200.dat DIR/mid280.dat
# The event counts follow the machine (files under /usr, their sizes); FILES200 and
# FILES280 (default 3000 and 4300 files read) move them. INSTANCE=name records into a
# private instance (`record -B name`, which leaves the top-level buffer to others; the
# report then prefixes every line with the name), otherwise the top level is recorded.
# Needs root, tracefs and trace-cmd; drops the page cache before each recording.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
out=$1
mkdir -p "$out"
recorder=$here/scripts/trace-cmd-record
[ -f "$here/target/tracecmd-shim.so" ] || recorder=trace-cmd

events="-e kmem:kmalloc -e kmem:kfree -e raw_syscalls -e syscalls:sys_enter_openat
    -e syscalls:sys_exit_openat -e ext4 -e filemap"

record() { # name, files to read
    name=$1
    files=$2
    # trace-cmd leaves its -b buffer size behind: put the old size back afterwards.
    sizefile=""
    for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        [ -z "$sizefile" ] && [ -w "$d/buffer_size_kb" ] && sizefile=$d/buffer_size_kb
    done
    oldsize=$([ -n "$sizefile" ] && cat "$sizefile" || true)
    sync
    echo 3 >/proc/sys/vm/drop_caches
    # shellcheck disable=SC2086 # the event options are words
    "$recorder" record ${INSTANCE:+-B "$INSTANCE"} -b 32768 $events -o "$out/$name.dat" -- \
        sh -c "find /usr -type f 2>/dev/null | head -$files | xargs cat >/dev/null 2>&1" \
        >/dev/null 2>"$out/$name.err" || { cat "$out/$name.err" >&2; exit 1; }
    case "$oldsize" in
        # A buffer never used reads "7 (expanded: 1408)": restore the size a trace gets.
        *expanded:*) oldsize=${oldsize##*expanded: }; oldsize=${oldsize%)}
            echo "$oldsize" >"$sizefile" 2>/dev/null || true ;;
        [0-9]*) echo "$oldsize" >"$sizefile" 2>/dev/null || true ;;
    esac
    rm -f "$out/$name.err"
    echo "$out/$name.dat: $(trace-cmd report -i "$out/$name.dat" 2>/dev/null | tail -n +2 | wc -l) events"
}

record mid200 "${FILES200:-3000}"
record mid280 "${FILES280:-4300}"
