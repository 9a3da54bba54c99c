# Runs inside the 2-CPU qemu guest (see make-function.sh): records the function tracer
# with trace-cmd itself, in the top buffer and in an instance, with filters that take in
# callers and their callees (so that trace-cmd's report indents the callees); the
# workload runs on both CPUs at once, so that each CPU's stack matters.
set -e
cd /tmp
trace-cmd record -q -p function \
    -l do_sys_openat2 -l getname -l getname_flags -l do_filp_open -l path_openat \
    -l 'vfs_*' -l ksys_read -l ksys_write -l fput -l __fput \
    -e sched:sched_switch \
    -B fn -p function -l ksys_read -l vfs_read -l rw_verify_area \
    -o /out/function.dat -- sh -c 'for i in 1 2; do (for j in 1 2 3; do cat /etc/hostname; ls / >/dev/null; done) & done; wait'
uname -r > /out/uname
trace-cmd --version > /out/version 2>&1 || true
