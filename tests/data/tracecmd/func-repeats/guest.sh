# Runs inside the 2-CPU qemu guest (see make-recording.sh). The function tracer with
# the `func-no-repeats` option writes one `func_repeats` record for a run of calls of the
# same function from the same caller: `filldir64`, called from `dcache_readdir` once per
# directory entry of the initramfs' tmpfs, repeats hundreds of times for `ls /bin`.
set -e
cd /tmp
fns='__x64_sys_getdents64 iterate_dir dcache_readdir filldir64'
for f in $fns; do grep -qx "$f" /sys/kernel/tracing/available_filter_functions || echo "not traceable: $f"; done
set -- $(for f in $fns; do echo "-l $f"; done)
work='ls / /etc /bin /dev'
# 1. The fixture: tracectl's own recording.
tracectl record -q -p function -O func-no-repeats "$@" -o /out/record.dat -- sh -c "$work >/dev/null"
echo "record=$?"
# 2. The kernel's text of the same kind of run, and the same buffer drained afterwards.
T=/sys/kernel/tracing
echo 0 > $T/tracing_on
for f in $fns; do echo "$f" >> $T/set_ftrace_filter; done
echo 1 > $T/options/func-no-repeats
echo function > $T/current_tracer
echo > $T/trace
echo 1 > $T/tracing_on
sh -c "$work >/dev/null"
echo 0 > $T/tracing_on
cat $T/trace > /out/kernel-trace.txt
tracectl extract -q -o /out/extract.dat
echo "extract=$?"
# 3. The same with the counter clock, whose times are raw counts.
echo counter > $T/trace_clock
echo > $T/trace
echo 1 > $T/tracing_on
sh -c "$work >/dev/null"
echo 0 > $T/tracing_on
cat $T/trace > /out/kernel-trace-counter.txt
tracectl extract -q -o /out/extract-counter.dat
echo "extract-counter=$?"
echo local > $T/trace_clock
echo nop > $T/current_tracer
uname -r > /out/uname
