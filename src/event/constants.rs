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
