//! Names some `print fmt`s leave unexpanded: C enum constants the kernel did not export
//! with `TRACE_DEFINE_ENUM`, and x86-64 memory-layout constants.
//!
//! The format file cannot tell their values, so these are the kernel's values (6.x,
//! x86-64 defaults). An event naming a constant that is not here prints as `field=value`
//! pairs. `vmemmap_base` is the x86-64 default without memory-layout randomization; a
//! kernel with `CONFIG_RANDOMIZE_MEMORY` active prints other `page=` values.

/// The value of a constant a print fmt names, if known.
pub(crate) fn constant(name: &str) -> Option<u64> {
    Some(match name {
        // enum hrtimer_mode: ABS 0, REL 1, PINNED 2, SOFT 4, HARD 8 and their sums.
        "HRTIMER_MODE_ABS" => 0,
        "HRTIMER_MODE_REL" => 1,
        "HRTIMER_MODE_PINNED" => 2,
        "HRTIMER_MODE_SOFT" => 4,
        "HRTIMER_MODE_HARD" => 8,
        "HRTIMER_MODE_ABS_PINNED" => 2,
        "HRTIMER_MODE_REL_PINNED" => 3,
        "HRTIMER_MODE_ABS_SOFT" => 4,
        "HRTIMER_MODE_REL_SOFT" => 5,
        "HRTIMER_MODE_ABS_PINNED_SOFT" => 6,
        "HRTIMER_MODE_REL_PINNED_SOFT" => 7,
        "HRTIMER_MODE_ABS_HARD" => 8,
        "HRTIMER_MODE_REL_HARD" => 9,
        "HRTIMER_MODE_ABS_PINNED_HARD" => 10,
        "HRTIMER_MODE_REL_PINNED_HARD" => 11,
        // enum ioprio_class (include/uapi/linux/ioprio.h).
        "IOPRIO_CLASS_NONE" => 0,
        "IOPRIO_CLASS_RT" => 1,
        "IOPRIO_CLASS_BE" => 2,
        "IOPRIO_CLASS_IDLE" => 3,
        "IOPRIO_CLASS_INVALID" => 7,
        // Inode state bits, an enum since 6.1x (bit 3 is reserved for the wait address).
        // The dirty bits are checked against this kernel's own text (tests/event_*oracle*).
        "I_NEW" => 1 << 0,
        "I_SYNC" => 1 << 1,
        "I_LRU_ISOLATING" => 1 << 2,
        "I_DIRTY_SYNC" => 1 << 4,
        "I_DIRTY_DATASYNC" => 1 << 5,
        "I_DIRTY_PAGES" => 1 << 6,
        "I_WILL_FREE" => 1 << 7,
        "I_FREEING" => 1 << 8,
        "I_CLEAR" => 1 << 9,
        "I_REFERENCED" => 1 << 10,
        "I_LINKABLE" => 1 << 11,
        "I_DIRTY_TIME" => 1 << 12,
        "I_WB_SWITCH" => 1 << 13,
        "I_OVL_INUSE" => 1 << 14,
        "I_CREATING" => 1 << 15,
        "I_DONTCACHE" => 1 << 16,
        "I_SYNC_QUEUED" => 1 << 17,
        "I_PINNING_NETFS_WB" => 1 << 18,
        // enum fault_flag (include/linux/mm_types.h).
        "FAULT_FLAG_WRITE" => 1 << 0,
        "FAULT_FLAG_MKWRITE" => 1 << 1,
        "FAULT_FLAG_ALLOW_RETRY" => 1 << 2,
        "FAULT_FLAG_RETRY_NOWAIT" => 1 << 3,
        "FAULT_FLAG_KILLABLE" => 1 << 4,
        "FAULT_FLAG_TRIED" => 1 << 5,
        "FAULT_FLAG_USER" => 1 << 6,
        "FAULT_FLAG_REMOTE" => 1 << 7,
        "FAULT_FLAG_INSTRUCTION" => 1 << 8,
        "FAULT_FLAG_INTERRUPTIBLE" => 1 << 9,
        "FAULT_FLAG_UNSHARE" => 1 << 10,
        "FAULT_FLAG_ORIG_PTE_VALID" => 1 << 11,
        "FAULT_FLAG_VMA_LOCK" => 1 << 12,
        // TCP states (include/net/tcp_states.h), stable since they exist.
        "TCP_ESTABLISHED" => 1,
        "TCP_SYN_SENT" => 2,
        "TCP_SYN_RECV" => 3,
        "TCP_FIN_WAIT1" => 4,
        "TCP_FIN_WAIT2" => 5,
        "TCP_TIME_WAIT" => 6,
        "TCP_CLOSE" => 7,
        "TCP_CLOSE_WAIT" => 8,
        "TCP_LAST_ACK" => 9,
        "TCP_LISTEN" => 10,
        "TCP_CLOSING" => 11,
        "TCP_NEW_SYN_RECV" => 12,
        "TCP_BOUND_INACTIVE" => 13,
        // enum vm_fault_reason (include/linux/mm_types.h).
        "VM_FAULT_OOM" => 0x1,
        "VM_FAULT_SIGBUS" => 0x2,
        "VM_FAULT_MAJOR" => 0x4,
        "VM_FAULT_HWPOISON" => 0x10,
        "VM_FAULT_HWPOISON_LARGE" => 0x20,
        "VM_FAULT_SIGSEGV" => 0x40,
        "VM_FAULT_NOPAGE" => 0x100,
        "VM_FAULT_LOCKED" => 0x200,
        "VM_FAULT_RETRY" => 0x400,
        "VM_FAULT_FALLBACK" => 0x800,
        "VM_FAULT_DONE_COW" => 0x1000,
        "VM_FAULT_NEEDDSYNC" => 0x2000,
        "VM_FAULT_COMPLETED" => 0x4000,
        // x86-64: start of the struct page array (no memory-layout randomization).
        "vmemmap_base" => 0xffff_ea00_0000_0000,
        _ => return None,
    })
}

/// `sizeof(struct <tag>)` for the structs print fmts do pointer arithmetic on.
pub(crate) fn struct_size(tag: &str) -> Option<usize> {
    match tag {
        "page" => Some(64),
        _ => None,
    }
}
