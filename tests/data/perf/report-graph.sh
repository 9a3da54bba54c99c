#!/bin/sh
# Writes results/report-g.*.txt: what perf report --stdio (perf 6.1) prints with call
# graphs under the rows. Run in this directory: sh report-graph.sh
# perf ends with a random tip, which is cut off.
set -e
run() {
    data=$1
    shift
    name=$(echo "${data%.data} $*" | sed 's/ *$//; s/ /_/g')
    perf report -i "$data" --symfs symfs --kallsyms "${K:-kallsyms}" --stdio "$@" 2>/dev/null \
        | grep -v '^# (Tip:' > "results/report-g.$name.txt"
}
run calls.data
run calls.data --no-children
run calls.data -g caller --no-children
run calls.data -g callee
run calls.data -g folded
run calls.data -g flat --no-children
run calls.data -g fractal
run calls.data -g fractal,30,callee
run calls.data -g graph,10,period
run calls.data -g graph,0.5,count --no-children
run calls.data -g graph,0,2
run calls.data --sort sym
run cc-spin.data
run cc-spin.data -g callee
run cc-spin.data -g flat,0,2
run tc-spin.data
run tc-spin.data -g folded,callee --no-children
run tp-callchain.data -g caller,5 --no-children
run tp-callchain.data -g graph,5
run tp-callchain.data -g callee,5
run tp-callchain.data -g fractal,5
run calls.data -g --no-children
run calls.data -G --no-children
run calls.data --sort sym,dso
run calls.data --sort addr
run tp-callchain.data --sort comm,cpu,addr -g callee,5
K=kallsyms-mt run mt-clock.data
K=kallsyms-mt run mt-clock.data -g callee
run calls.data --symbol-filter=caller
run calls.data --no-children -g caller hot
K=kallsyms-mt run mt-clock.data --symbol-filter=irq
K=kallsyms-mt run mt-clock.data --sort pid,sym
run tp-callchain.data --sort time,trace -g callee,20
run dwarf-calls.data
run dwarf-calls.data --no-children
run dwarf-calls.data -g folded --no-children
run calls.data -g caller -g fractal --no-children
run calls.data -g flat,0,2 -g callee --no-children
run calls.data -g none -g graph --no-children
run inl-dwarf.data
run inl-dwarf.data --no-children
run inl-dwarf.data -g callee
run inl-dwarf.data -g folded --no-children
run inl-dwarf.data --no-inline
run calls.data --percentage relative --symbol-filter=a
K=kallsyms-mt run mt-clock.data --percentage relative --symbol-filter=a --no-children
K=kallsyms-mt run mt-clock.data --percentage relative --symbol-filter=_ -n
