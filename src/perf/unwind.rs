//! User stacks unwound after the fact (`perf record --call-graph dwarf`): a sample
//! carries the user registers and a copy of the user stack, and the call frame
//! information (`.eh_frame`, `.debug_frame`) of the ELF files mapped into the process
//! says where each frame's caller is. The unwinding itself is `framehop`'s.
//!
//! As in perf (its libunwind and libdw unwinders alike), the first frame is the
//! sampled instruction and every caller frame is its return address less one, so
//! that the address falls inside the call instruction.
//!
//! framehop recovers only the instruction, stack and frame pointers, so a frame whose
//! call frame information needs another register ends the chain where perf's
//! libunwind, which recovers them all, can go on.
//!
//! Registers are numbered as x86_64's `PERF_REG_X86_*`; files of other machines give no
//! unwind information here, so their samples keep only their kernel frames.

use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};
use object::{Object, ObjectSection, ObjectSegment};

use super::sys::MappedFile;
use crate::endian::Endianness;

/// perf's default `--call-graph` depth (`kernel.perf_event_max_stack`).
pub const MAX_FRAMES: usize = 127;

/// `PERF_REG_X86_BP`.
const REG_BP: u32 = 6;
/// `PERF_REG_X86_SP`.
const REG_SP: u32 = 7;
/// `PERF_REG_X86_IP`.
const REG_IP: u32 = 8;

/// The user registers perf's `--call-graph dwarf` samples on x86_64 (its
/// `PERF_REGS_MASK`: AX to R15 without DS, ES, FS and GS).
pub const X86_64_USER_REGS: u64 = 0xff0fff;

/// Bytes of a mapped file, shared by every section cut from it.
#[derive(Debug, Clone)]
pub(crate) struct FileBytes {
    file: Arc<MappedFile>,
    range: Range<usize>,
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.file.bytes()[self.range.clone()]
    }
}

/// A section's address as the file states it, and its bytes.
#[derive(Debug, Clone)]
struct Section {
    svma: Range<u64>,
    bytes: FileBytes,
}

/// The call frame information of one ELF file and where its loadable segments sit.
#[derive(Debug)]
pub(crate) struct ElfCfi {
    text: Option<Section>,
    eh_frame: Option<Section>,
    eh_frame_hdr: Option<Section>,
    got: Option<Range<u64>>,
    debug_frame: Option<FileBytes>,
    /// `(file offset, vaddr, file size)` of each PT_LOAD.
    loads: Vec<(u64, u64, u64)>,
}

impl ElfCfi {
    /// Read the unwind sections of `runtime` (the mapped file) and, when it has no
    /// `.debug_frame`, of `debug` (its separate debug file). None for a file that is not
    /// an x86_64 ELF or has no unwind information at all.
    pub(crate) fn read(runtime: Arc<MappedFile>, debug: Option<Arc<MappedFile>>) -> Option<ElfCfi> {
        let elf = object::File::parse(runtime.bytes()).ok()?;
        if elf.architecture() != object::Architecture::X86_64 {
            return None;
        }
        let section = |file: &Arc<MappedFile>, o: &object::File, name: &str| -> Option<Section> {
            let s = o.section_by_name(name)?;
            let (off, size) = s.file_range()?;
            let start = usize::try_from(off).ok()?;
            let end = start.checked_add(usize::try_from(size).ok()?)?;
            let svma_end = s.address().checked_add(size)?;
            (end <= file.bytes().len()).then(|| Section {
                svma: s.address()..svma_end,
                bytes: FileBytes {
                    file: file.clone(),
                    range: start..end,
                },
            })
        };
        let mut debug_frame = section(&runtime, &elf, ".debug_frame").map(|s| s.bytes);
        if debug_frame.is_none() {
            if let Some(d) = &debug {
                if let Ok(o) = object::File::parse(d.bytes()) {
                    debug_frame = section(d, &o, ".debug_frame").map(|s| s.bytes);
                }
            }
        }
        let cfi = ElfCfi {
            text: section(&runtime, &elf, ".text"),
            eh_frame: section(&runtime, &elf, ".eh_frame"),
            eh_frame_hdr: section(&runtime, &elf, ".eh_frame_hdr"),
            got: elf
                .section_by_name(".got")
                .map(|s| s.address()..s.address().saturating_add(s.size())),
            debug_frame,
            loads: elf
                .segments()
                .map(|s| {
                    let (off, size) = s.file_range();
                    (off, s.address(), size)
                })
                .collect(),
        };
        (cfi.eh_frame.is_some() || cfi.debug_frame.is_some()).then_some(cfi)
    }

    /// The address the file's address 0 is loaded at, for a mapping of its file offset
    /// `pgoff` at `start`.
    fn base_avma(&self, start: u64, pgoff: u64) -> u64 {
        let (off, vaddr) = self
            .loads
            .iter()
            .find(|&&(off, _, size)| pgoff >= off && pgoff - off < size.max(1))
            .map_or((0, 0), |&(off, vaddr, _)| (off, vaddr));
        start
            .wrapping_sub(pgoff)
            .wrapping_add(off)
            .wrapping_sub(vaddr)
    }

    fn module(&self, name: &str, avma: Range<u64>, pgoff: u64) -> Module<FileBytes> {
        let base = self.base_avma(avma.start, pgoff);
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: self.text.as_ref().map(|s| s.svma.clone()),
            text: self.text.as_ref().map(|s| s.bytes.clone()),
            got_svma: self.got.clone(),
            eh_frame_svma: self.eh_frame.as_ref().map(|s| s.svma.clone()),
            eh_frame: self.eh_frame.as_ref().map(|s| s.bytes.clone()),
            eh_frame_hdr_svma: self.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
            eh_frame_hdr: self.eh_frame_hdr.as_ref().map(|s| s.bytes.clone()),
            debug_frame: self.debug_frame.clone(),
            stubs_svma: None,
            stub_helper_svma: None,
            unwind_info: None,
            text_segment_svma: None,
            text_segment: None,
        };
        Module::new(name.to_string(), avma, base, info)
    }
}

/// One executable mapping of a process, with the unwind information of its file.
#[derive(Debug, Clone)]
pub(crate) struct MappedCfi {
    pub(crate) name: String,
    pub(crate) avma: Range<u64>,
    pub(crate) pgoff: u64,
    pub(crate) cfi: Arc<ElfCfi>,
}

/// The unwinders of the processes seen so far, each made from the process's mappings
/// when one of its samples is first unwound and forgotten when they change.
#[derive(Default)]
pub(crate) struct Unwinders {
    /// Each process's unwinder and its executable mappings, sorted.
    by_pid: HashMap<i32, (UnwinderX86_64<FileBytes>, Vec<Range<u64>>)>,
    cache: Option<Box<CacheX86_64>>,
}

impl std::fmt::Debug for Unwinders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unwinders")
            .field("processes", &self.by_pid.len())
            .finish()
    }
}

/// What a sample holds for unwinding its user stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserState<'a> {
    pub(crate) ip: u64,
    pub(crate) sp: u64,
    pub(crate) bp: u64,
    pub(crate) stack: &'a [u8],
    pub(crate) endian: Endianness,
}

impl<'a> UserState<'a> {
    /// The registers and stack of a sample, if it has them (a kernel thread's samples
    /// and samples without `--call-graph dwarf` have none).
    pub(crate) fn of(s: &super::data::Sample<'a>) -> Option<UserState<'a>> {
        if s.user_stack.is_empty() {
            return None;
        }
        let r = &s.user_regs;
        Some(UserState {
            ip: r.get(REG_IP, s.endian)?,
            sp: r.get(REG_SP, s.endian)?,
            bp: r.get(REG_BP, s.endian)?,
            stack: s.user_stack,
            endian: s.endian,
        })
    }
}

impl Unwinders {
    /// Forget the unwinder of `pid` (its mappings changed).
    pub(crate) fn forget(&mut self, pid: i32) {
        self.by_pid.remove(&pid);
    }

    /// The user frames of a sample of `pid`, innermost first, as perf lists them: the
    /// sampled address, then each return address less one. `maps` gives the process's
    /// executable mappings (those whose files have call frame information, and the
    /// address ranges of all) when its unwinder has to be made. Stops at the end of the
    /// stack, at the end of the copied stack, at a return address outside every
    /// executable mapping (no code returns there) or at [`MAX_FRAMES`].
    pub(crate) fn unwind(
        &mut self,
        pid: i32,
        state: &UserState,
        maps: impl FnOnce() -> (Vec<MappedCfi>, Vec<Range<u64>>),
    ) -> Vec<u64> {
        let (unwinder, code) = self.by_pid.entry(pid).or_insert_with(|| {
            let mut u = UnwinderX86_64::new();
            let (cfi, mut code) = maps();
            for m in cfi {
                u.add_module(m.cfi.module(&m.name, m.avma, m.pgoff));
            }
            code.sort_by_key(|r| r.start);
            (u, code)
        });
        let is_code = |addr: u64| {
            let i = code.partition_point(|r| r.start <= addr);
            i > 0 && addr < code[i - 1].end
        };
        let cache = self
            .cache
            .get_or_insert_with(|| Box::new(CacheX86_64::new()));
        let (sp, stack, endian) = (state.sp, state.stack, state.endian);
        let mut read_stack = |addr: u64| -> Result<u64, ()> {
            let off = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
            let end = off.checked_add(8).ok_or(())?;
            stack.get(off..end).map(|b| endian.u64(b)).ok_or(())
        };
        let regs = UnwindRegsX86_64::new(state.ip, state.sp, state.bp);
        let mut frames = unwinder.iter_frames(state.ip, regs, cache, &mut read_stack);
        let mut out = Vec::new();
        while out.len() < MAX_FRAMES {
            match frames.next() {
                Ok(Some(f)) if f.is_return_address() && !is_code(f.address()) => break,
                Ok(Some(f)) => out.push(f.address_for_lookup()),
                // A caller whose return address lies past the copied stack: perf's
                // libunwind reads it as 0 and lists it, less one, as a last frame
                // (`ffffffffffffffff [unknown]`).
                Err(framehop::Error::CouldNotReadStack(_)) => {
                    out.push(u64::MAX);
                    break;
                }
                // The end of the stack, or a frame that cannot be unwound: what was
                // found so far stands, as in perf.
                Ok(None) | Err(_) => break,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::data::{Sample, UserRegs};

    /// With perf's mask 0xff0fff the sample holds AX..SS then R8..R15, one u64 each in
    /// bit order: BP, SP and IP are the 7th, 8th and 9th.
    #[test]
    fn registers_are_found_by_their_place_in_the_mask() {
        let raw: Vec<u8> = (0..20u64).flat_map(|v| (v * 0x100).to_ne_bytes()).collect();
        let stack = [0u8; 16];
        let mut s = Sample {
            user_regs: UserRegs {
                abi: 2,
                mask: X86_64_USER_REGS,
                raw: &raw,
            },
            user_stack: &stack,
            endian: Endianness::NATIVE,
            ..Sample::default()
        };
        let st = UserState::of(&s).unwrap();
        assert_eq!((st.bp, st.sp, st.ip), (0x600, 0x700, 0x800));
        // R8 (bit 16) comes right after SS (bit 11).
        assert_eq!(s.user_regs.get(16, s.endian), Some(0xc00));
        assert_eq!(s.user_regs.get(12, s.endian), None);
        // A kernel thread's sample: ABI none, no registers, nothing to unwind.
        s.user_regs.abi = 0;
        assert!(UserState::of(&s).is_none());
    }
}
