//! The `tracectl` command line.

mod cli;

fn main() {
    tune_malloc();
    let code = cli::main();
    std::process::exit(code);
}

/// Keep freed memory for reuse instead of returning it to the kernel, in a heap that huge
/// pages may back.
///
/// A report builds large temporary tables (the kallsyms text and its symbol tables, page
/// and record batches). With glibc's defaults each large block is mapped fresh and
/// unmapped when freed, so every reuse faults its pages in again: 11k page faults, a
/// tenth of a 300k-event report's time. Served from the heap and never trimmed, freed
/// blocks are reused in place.
///
/// Even so, each 4 KiB page the heap first touches is a page fault that the kernel must
/// clear, about 1.7 µs each in a virtual machine: 1,100 of them were a sixth of a
/// 23k-event report's time. So the heap is grown once, by [`HUGE_HEAP`] bytes that stay
/// untouched until used, and that range is offered to transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`, honoured where they are enabled for `madvise` or always):
/// it is then faulted in 2 MiB at a time. Measured in 20 alternating runs on two shared
/// cores: the least CPU time of a 178k-event report down 8% (the median 19%), of a
/// 23k-event one 14%, and `--version` unchanged.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called before any thread
    // exists. The block is allocated and freed by malloc itself (its memory stays in the
    // heap, below the trim threshold); madvise only changes how the heap's pages are
    // backed, never their contents, and its range is checked to lie inside the heap
    // (a kernel without the feature just returns an error).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MALLOC_OPT_MMAP);
        libc::mallopt(libc::M_TRIM_THRESHOLD, MALLOC_OPT_TRIM);
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_OPT_ARENAS);
        let block = libc::malloc(HUGE_HEAP) as usize;
        if block == 0 {
            return;
        }
        libc::free(block as *mut libc::c_void);
        let top = libc::sbrk(0) as usize;
        const HUGE_PAGE: usize = 2 << 20;
        let start = block.next_multiple_of(HUGE_PAGE);
        let end = top / HUGE_PAGE * HUGE_PAGE;
        // (A block the heap could not hold was mapped apart and is unmapped by now.)
        if block < top && end > start && end - block <= 2 * HUGE_HEAP {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// The heap grown up front for [`tune_malloc`]: a large report's working set.
const HUGE_HEAP: usize = 64 << 20;

const MALLOC_OPT_MMAP: i32 = 1 << 29;
const MALLOC_OPT_TRIM: i32 = 1 << 30;
const MALLOC_OPT_ARENAS: i32 = 1;
