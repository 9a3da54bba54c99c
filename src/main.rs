//! The `tracectl` command line.

mod cli;

fn main() {
    tune_malloc();
    let code = cli::main();
    std::process::exit(code);
}

/// Keep freed memory for reuse instead of returning it to the kernel.
///
/// A report builds large temporary tables (the kallsyms text and its symbol tables, page
/// and record batches). With glibc's defaults each large block is mapped fresh and
/// unmapped when freed, so every reuse faults its pages in again: 11k page faults, a
/// tenth of a 300k-event report's time. Served from the heap and never trimmed, freed
/// blocks are reused in place.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called before any thread
    // exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MALLOC_OPT_MMAP);
        libc::mallopt(libc::M_TRIM_THRESHOLD, MALLOC_OPT_TRIM);
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_OPT_ARENAS);
    }
}

const MALLOC_OPT_MMAP: i32 = 1 << 29;
const MALLOC_OPT_TRIM: i32 = 1 << 30;
const MALLOC_OPT_ARENAS: i32 = 1;
