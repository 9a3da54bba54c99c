#!/usr/bin/env bash
# tlb-maple.dat: `trace-cmd record` of the tlb and maple_tree events in an instance
# buffer while a process maps and unmaps memory. trace-cmd prints tlb_flush with
# libtraceevent's tlb plugin, and fails the maple_tree events' formats (their format
# strings hold a raw tab), printing `[FAILED TO PARSE]` and the raw fields.
# report.txt and report-R.txt are trace-cmd 3.1.6's `report` and `report -R` of it.
# Needs root, tracefs and trace-cmd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
cd "$here"
"$repo/scripts/trace-cmd-record" record -B tlbmaple -e tlb -e maple_tree -o tlb-maple.dat \
    sh -c 'ls -l /usr/bin >/dev/null; sleep 0.05; ls /usr/lib >/dev/null' >/dev/null 2>&1
trace-cmd report -i tlb-maple.dat >report.txt 2>/dev/null
trace-cmd report -R -i tlb-maple.dat >report-R.txt 2>/dev/null
