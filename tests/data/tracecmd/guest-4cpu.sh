# Runs inside the 4-CPU qemu guest (see make-4cpu.sh): records with trace-cmd itself.
set -e
cd /tmp
trace-cmd record -q \
    -e sched -e irq -e timer \
    -e kmem:kmalloc -e kmem:kfree -e kmem:mm_page_alloc \
    -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat -e syscalls:sys_enter_write \
    -B golden -e sched:sched_switch -e sched:sched_waking \
    -o /out/trace.dat -- sh -c 'for i in 1 2 3 4; do (ls -R /bin >/dev/null; echo x >/tmp/x$i) & done; wait; sleep 0.05'
uname -r > /out/uname
trace-cmd --version > /out/version 2>&1 || true
