#!/bin/sh
# Writes results/report.NAME.txt for the sort keys socket, dso_size, parent (-p, -x),
# srcline and srcfile, and --time-quantum: what perf report --stdio (perf 6.1) prints
# with -g none and the options after NAME and the file. Run in this directory:
# sh report-keys.sh. perf ends with a random tip, which is cut off.
set -e
run() {
    name=$1
    data=$2
    shift 2
    perf report -i "$data" --symfs symfs --kallsyms "${K:-kallsyms}" --stdio -g none "$@" 2>/dev/null \
        | grep -v '^# (Tip:' > "results/report.$name.txt"
}
run tp-sched_socket,cpu tp-sched.data --sort socket,cpu
run cc-spin_socket cc-spin.data --sort socket
run tp-callchain_socket,sym tp-callchain.data --sort socket,sym
run cc-spin_dso_size,dso cc-spin.data --no-children --sort dso_size,dso
run calls_dso_size,sym calls.data --sort dso_size,sym
run cc-spin_parent cc-spin.data --sort parent
run tp-callchain_parent tp-callchain.data --sort parent -p 'schedule|^do_'
run tp-callchain_comm_p tp-callchain.data --sort comm -p '^__x64_sys|^do_'
run tp-callchain_comm,parent_x tp-callchain.data --no-children --sort comm,parent -x -p '^__x64_sys|^do_'
run tp-callchain_comm_x tp-callchain.data --sort comm -x
run tp-callchain_time_10ms tp-callchain.data --sort time --time-quantum 10ms
run calls_time,sym_0x1000000 calls.data --sort time,sym --time-quantum 0x1000000
run cc-spin_srcline,srcfile,sym cc-spin.data --sort srcline,srcfile,sym
K=kallsyms-lines run lines_srcline,sym lines.data --sort srcline,sym
K=kallsyms-lines run lines_srcline,sym_--no-children lines.data --no-children --sort srcline,sym
K=kallsyms-lines run lines_srcline lines.data --sort srcline
K=kallsyms-lines run lines_srcfile,srcline lines.data --sort srcfile,srcline
K=kallsyms-lines run lines_comm,srcfile_--no-children lines.data --no-children --sort comm,srcfile
run longsym longsym.data
run longsym_sym,dso longsym.data --sort sym,dso
run longsym-t longsym-t.data
run longsym-t_sym longsym-t.data --sort sym
run longsym-t_sym,dso longsym-t.data --sort sym,dso
run longsym-t_no-demangle longsym-t.data --no-demangle
run inl-dwarf_srcline inl-dwarf.data --sort srcline
run inl-dwarf_srcline,sym inl-dwarf.data --sort srcline,sym
run inl-dwarf_sym,srcline inl-dwarf.data --sort sym,srcline
run dwarf-calls_sym,srcline dwarf-calls.data --sort sym,srcline
run inl-dwarf_parent_inlined inl-dwarf.data --sort parent -p '^mix|^stir|^work|^main'
run inl-fp_parent_inlined inl-fp.data --sort parent -p '^mix|^stir'
run inl-fp_parent_work inl-fp.data --sort parent,sym -p '^work'
