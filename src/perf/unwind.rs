//! User stacks unwound after the fact (`perf record --call-graph dwarf`): a sample
//! carries the user registers and a copy of the user stack, and the call frame
//! information of the ELF files mapped into the process says where each frame's caller
//! is.
//!
//! Debian's perf 6.1 unwinds with libunwind (1.6), and this module follows what that
//! pair does step for step, so that both list the same frames:
//!
//! - the call frame information comes from `.eh_frame_hdr`'s search table and the
//!   `.eh_frame` entries it points at (perf is built without `.debug_frame` support);
//!   the file's load address is the lowest mapping of it in the process less its first
//!   `PT_LOAD`'s page-aligned address;
//! - every register of the sample (perf records AX to R15) takes part, so a frame whose
//!   canonical frame address or saved registers need another register than rip, rsp and
//!   rbp (a realigned stack keeping it in r10, an expression over rbp) unwinds too;
//! - a word read outside the stack copy is read from the file mapped there; in a
//!   mapping without a readable file (the rest of `[stack]`, anonymous memory) it reads
//!   as 0, so a return address past the copy becomes a frame at 0, listed less one as
//!   `ffffffffffffffff`; outside every mapping the read fails and the chain ends. The
//!   copy's last word counts as outside (perf's bound check is `addr + 8 >= end`);
//! - code without call frame information is unwound as libunwind guesses: a PLT entry,
//!   or a frame pointer chain when rbp points a little above the frame.
//!
//! As in perf, the first frame is the sampled instruction and every caller frame is its
//! return address less one (not after a signal frame), so that the address falls inside
//! the call instruction. Frames at address 0 are left out.
//!
//! Registers are numbered as in DWARF for x86_64 (`PERF_REG_X86_*` only to read the
//! sample); files of other machines give no unwind information here, so their samples
//! keep only the sampled address.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use gimli::{
    BaseAddresses, CfaRule, EhFrame, EhFrameHdr, EndianSlice, LittleEndian, RegisterRule,
    UnwindContext, UnwindSection,
};
use object::{Object, ObjectSection, ObjectSegment};

use super::sys::MappedFile;
use crate::endian::Endianness;

/// perf's default `--call-graph` depth (`kernel.perf_event_max_stack`).
pub const MAX_FRAMES: usize = 127;

/// The user registers perf's `--call-graph dwarf` samples on x86_64 (its
/// `PERF_REGS_MASK`: AX to R15 without DS, ES, FS and GS).
pub const X86_64_USER_REGS: u64 = 0xff0fff;

/// DWARF's x86_64 registers rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15 and the
/// return address (rip), as `PERF_REG_X86_*` numbers.
const PERF_REG_OF_DWARF: [u32; REGS] = [0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8];
/// How many registers unwinding tracks (libunwind's `DWARF_NUM_PRESERVED_REGS`).
const REGS: usize = 17;
const RBP: usize = 6;
const RSP: usize = 7;
const RIP: usize = 16;

/// A section's address as the file states it, and where its bytes are in the file.
#[derive(Debug, Clone)]
struct Section {
    svma: u64,
    bytes: Range<usize>,
}

/// One ELF file as the unwinder reads it: its bytes (perf reads the memory of a mapping
/// from its file) and its call frame information.
#[derive(Debug)]
pub(crate) struct ElfCfi {
    file: Arc<MappedFile>,
    eh_frame: Option<Section>,
    eh_frame_hdr: Option<Section>,
    text: Option<u64>,
    /// The first `PT_LOAD`'s address, page aligned (perf's `elf_base_address`).
    first_load: u64,
    /// The rules found for each file address so far: samples come back to the same
    /// places, and finding them again (the search table, the entry's instructions up
    /// to the row) is most of unwinding.
    rules: Mutex<HashMap<u64, FileRules>>,
}

impl ElfCfi {
    /// The file `runtime` (a mapped file, as perf reads it). None for a file that is not
    /// an x86_64 ELF file.
    pub(crate) fn read(runtime: Arc<MappedFile>) -> Option<ElfCfi> {
        let elf = object::File::parse(runtime.bytes()).ok()?;
        if elf.architecture() != object::Architecture::X86_64 {
            return None;
        }
        let len = runtime.bytes().len();
        let section = |name: &str| -> Option<Section> {
            let s = elf.section_by_name(name)?;
            let (off, size) = s.file_range()?;
            let start = usize::try_from(off).ok()?;
            let end = start.checked_add(usize::try_from(size).ok()?)?;
            (end <= len).then(|| Section {
                svma: s.address(),
                bytes: start..end,
            })
        };
        let first_load = elf
            .segments()
            .next()
            .map_or(0, |s| s.address() & !(PAGE_SIZE - 1));
        Some(ElfCfi {
            eh_frame: section(".eh_frame"),
            eh_frame_hdr: section(".eh_frame_hdr"),
            text: elf.section_by_name(".text").map(|s| s.address()),
            first_load,
            file: runtime,
            rules: Mutex::default(),
        })
    }

    fn bytes(&self, s: &Section) -> &[u8] {
        &self.file.bytes()[s.bytes.clone()]
    }
}

/// The page size perf aligns the first `PT_LOAD` with (`getpagesize()` on x86_64).
const PAGE_SIZE: u64 = 4096;

/// One mapping of a process (perf's thread maps: code, data, the stack, anonymous
/// memory), with its file when it has one that could be read.
#[derive(Debug, Clone)]
pub(crate) struct ProcessMap {
    pub(crate) avma: Range<u64>,
    pub(crate) pgoff: u64,
    /// Which object is mapped: mappings of one file share it.
    pub(crate) object: usize,
    pub(crate) file: Option<Arc<ElfCfi>>,
}

/// The mappings of the processes seen so far, each taken when one of its samples is
/// first unwound and forgotten when they change.
#[derive(Debug, Default)]
pub(crate) struct Unwinders {
    /// Each process's mappings, sorted by address.
    by_pid: HashMap<i32, Vec<ProcessMap>>,
}

/// What a sample holds for unwinding its user stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserState<'a> {
    /// The registers in DWARF order, None for one the sample does not hold.
    regs: [Option<u64>; REGS],
    pub(crate) ip: u64,
    pub(crate) sp: u64,
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
        let regs = PERF_REG_OF_DWARF.map(|p| r.get(p, s.endian));
        Some(UserState {
            ip: regs[RIP]?,
            sp: regs[RSP]?,
            regs,
            stack: s.user_stack,
            endian: s.endian,
        })
    }
}

impl Unwinders {
    /// Forget the mappings of `pid` (they changed).
    pub(crate) fn forget(&mut self, pid: i32) {
        self.by_pid.remove(&pid);
    }

    /// The user frames of a sample of `pid`, innermost first, as perf lists them: the
    /// sampled address, then each return address less one. `maps` gives the process's
    /// mappings when they have to be taken. Stops where libunwind stops: at the end of
    /// the stack (an undefined return address), at a frame it cannot unwind, or at
    /// [`MAX_FRAMES`].
    pub(crate) fn unwind(
        &mut self,
        pid: i32,
        state: &UserState,
        maps: impl FnOnce() -> Vec<ProcessMap>,
    ) -> Vec<u64> {
        let maps = self.by_pid.entry(pid).or_insert_with(|| {
            let mut m = maps();
            m.sort_by_key(|m| m.avma.start);
            m
        });
        let space = AddressSpace {
            maps,
            state,
            ctx: UnwindContext::new(),
        };
        space.frames()
    }
}

/// Where the value of a register of the caller's frame is (libunwind's `dwarf_loc_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    /// Not recoverable.
    Null,
    /// In a register of the sample.
    Reg(usize),
    /// In memory at this address.
    Mem(u64),
    /// This value.
    Val(u64),
}

/// A read that failed (libunwind's negative return codes).
#[derive(Debug, Clone, Copy)]
struct Fault;

/// What the unwinder reads a sample's memory and registers through (perf's accessors
/// for libunwind).
struct AddressSpace<'s, 'a> {
    maps: &'s [ProcessMap],
    state: &'s UserState<'a>,
    ctx: UnwindContext<usize>,
}

/// The unwind rules of one address, copied out of its `.eh_frame` row, with its DWARF
/// expressions as `X`: slices of the file, or where they are in it (kept per file).
#[derive(Debug, Clone, Copy)]
struct Rules<X> {
    cfa: Cfa<X>,
    regs: [Rule<X>; REGS],
    /// The entry describes a signal trampoline (augmentation `S`).
    signal: bool,
}

#[derive(Debug, Clone, Copy)]
enum Cfa<X> {
    RegOffset(usize, i64),
    Expr(X),
}

#[derive(Debug, Clone, Copy)]
enum Rule<X> {
    Same,
    Undefined,
    Offset(i64),
    ValOffset(i64),
    Register(usize),
    Expr(X),
    ValExpr(X),
}

impl<X: Copy> Rules<X> {
    /// The same rules with each expression `f(expression)`.
    fn map<Y>(&self, f: impl Fn(X) -> Y) -> Rules<Y> {
        let rule = |r: Rule<X>| match r {
            Rule::Same => Rule::Same,
            Rule::Undefined => Rule::Undefined,
            Rule::Offset(o) => Rule::Offset(o),
            Rule::ValOffset(o) => Rule::ValOffset(o),
            Rule::Register(r) => Rule::Register(r),
            Rule::Expr(e) => Rule::Expr(f(e)),
            Rule::ValExpr(e) => Rule::ValExpr(f(e)),
        };
        Rules {
            cfa: match self.cfa {
                Cfa::RegOffset(r, o) => Cfa::RegOffset(r, o),
                Cfa::Expr(e) => Cfa::Expr(f(e)),
            },
            regs: self.regs.map(rule),
            signal: self.signal,
        }
    }
}

/// A file's rules for an address, its expressions as where they are in the file
/// (start and end offsets).
type FileRules = Result<Rules<(usize, usize)>, Missing>;

/// Why no rules were found for an address: libunwind goes on guessing only after
/// `NoInfo`.
#[derive(Debug, Clone, Copy)]
enum Missing {
    NoInfo,
    Fatal,
}

/// libunwind's cursor over the frames of one sample.
struct Cursor {
    loc: [Loc; REGS],
    cfa: u64,
    ip: u64,
    /// Look the caller's rules up at `ip - 1` (not after a signal frame).
    use_prev_instr: bool,
    /// The frame just stepped out of was a signal trampoline.
    signal: bool,
}

impl<'s> AddressSpace<'s, '_> {
    fn map_of(&self, addr: u64) -> Option<&'s ProcessMap> {
        let maps: &'s [ProcessMap] = self.maps;
        let i = maps.partition_point(|m| m.avma.start <= addr);
        (i > 0 && addr < maps[i - 1].avma.end).then(|| &maps[i - 1])
    }

    /// A word of memory as perf's `access_mem` reads it: from the stack copy when it
    /// lies wholly inside it and is not its last word, else from the file mapped there.
    /// Ok(None) is a read perf answers with 0 and success (a mapping whose file has no
    /// such bytes).
    fn memory(&self, addr: u64) -> Result<Option<u64>, Fault> {
        let end_of_word = addr.checked_add(8).ok_or(Fault)?;
        let (sp, stack) = (self.state.sp, self.state.stack);
        let stack_end = sp.saturating_add(stack.len() as u64);
        if addr >= sp && end_of_word < stack_end {
            let off = (addr - sp) as usize;
            return Ok(Some(self.state.endian.u64(&stack[off..off + 8])));
        }
        let map = self.map_of(addr).ok_or(Fault)?;
        let word = map.file.as_ref().and_then(|f| {
            let off = usize::try_from(addr - map.avma.start + map.pgoff).ok()?;
            let b = f.file.bytes().get(off..off.checked_add(8)?)?;
            Some(u64::from_le_bytes(b.try_into().ok()?))
        });
        Ok(word)
    }

    fn read(&self, addr: u64) -> Result<u64, Fault> {
        Ok(self.memory(addr)?.unwrap_or(0))
    }

    /// The value at a location (libunwind's `dwarf_get`).
    fn get(&self, loc: Loc) -> Result<u64, Fault> {
        match loc {
            Loc::Null => Err(Fault),
            Loc::Reg(r) => self.state.regs[r].ok_or(Fault),
            Loc::Mem(a) => self.read(a),
            Loc::Val(v) => Ok(v),
        }
    }

    /// A register of the frame being unwound (libunwind's `unw_get_reg`): rsp is the
    /// frame's canonical frame address.
    fn register(&self, c: &Cursor, r: usize) -> Result<u64, Fault> {
        match r {
            RSP => Ok(c.cfa),
            r if r < REGS => self.get(c.loc[r]),
            _ => Err(Fault),
        }
    }

    /// The rules `.eh_frame` gives for `addr`, found as perf finds them: the mapping
    /// holding the address, its file's `.eh_frame_hdr` search table.
    fn rules(&mut self, addr: u64) -> Result<Rules<&'s [u8]>, Missing> {
        let map = self.map_of(addr).ok_or(Missing::Fatal)?;
        let file: &'s ElfCfi = map.file.as_deref().ok_or(Missing::Fatal)?;
        let lowest = self
            .maps
            .iter()
            .filter(|m| m.object == map.object)
            .map(|m| m.avma.start)
            .min()
            .unwrap_or(map.avma.start);
        let bias = lowest.wrapping_sub(file.first_load);
        let svma = addr.wrapping_sub(bias);
        let bytes = file.file.bytes();
        let in_file = |(start, end): (usize, usize)| bytes.get(start..end).unwrap_or_default();
        if let Some(found) = file.rules.lock().ok().and_then(|r| r.get(&svma).copied()) {
            return found.map(|r| r.map(in_file));
        }
        let found = self.rules_in(file, svma);
        let at = |e: &[u8]| {
            let start = (e.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize);
            (start, start + e.len())
        };
        if let Ok(mut cache) = file.rules.lock() {
            cache.insert(svma, found.as_ref().map(|r| r.map(at)).map_err(|m| *m));
        }
        found
    }

    /// The rules `file`'s `.eh_frame` gives for its address `svma`.
    fn rules_in(&mut self, file: &'s ElfCfi, svma: u64) -> Result<Rules<&'s [u8]>, Missing> {
        let (Some(hdr), Some(eh)) = (&file.eh_frame_hdr, &file.eh_frame) else {
            return Err(Missing::Fatal);
        };
        let mut bases = BaseAddresses::default()
            .set_eh_frame_hdr(hdr.svma)
            .set_eh_frame(eh.svma);
        if let Some(t) = file.text {
            bases = bases.set_text(t);
        }
        let eh_frame = EhFrame::new(file.bytes(eh), LittleEndian);
        let parsed = EhFrameHdr::new(file.bytes(hdr), LittleEndian)
            .parse(&bases, 8)
            .map_err(|_| Missing::Fatal)?;
        let table = parsed.table().ok_or(Missing::Fatal)?;
        let missing = |e: gimli::Error| match e {
            gimli::Error::NoUnwindInfoForAddress => Missing::NoInfo,
            _ => Missing::Fatal,
        };
        let fde = table
            .fde_for_address(&eh_frame, &bases, svma, EhFrame::cie_from_offset)
            .map_err(missing)?;
        let row = fde
            .unwind_info_for_address(&eh_frame, &bases, &mut self.ctx, svma)
            .map_err(missing)?;
        let expr = |e: &gimli::UnwindExpression<usize>| -> Result<&'s [u8], Missing> {
            Ok(e.get(&eh_frame).map_err(|_| Missing::Fatal)?.0.slice())
        };
        let cfa = match row.cfa() {
            CfaRule::RegisterAndOffset { register, offset } => {
                Cfa::RegOffset(usize::from(register.0), *offset)
            }
            CfaRule::Expression(e) => Cfa::Expr(expr(e)?),
        };
        // gimli drops a register made undefined, so a return address without a rule
        // is the end of the stack (`DW_CFA_undefined rip` in `_start`). Any other
        // register without one keeps its value, unless the instructions made it
        // undefined: libunwind then gives it no location (`DWARF_WHERE_UNDEF`), and a
        // caller that needs it (an rbp-based CFA) cannot be unwound.
        let undefined = undefined_registers(&eh_frame, &bases, &fde, svma);
        let mut regs = [Rule::Same; REGS];
        for (slot, undefined) in regs.iter_mut().zip(undefined) {
            if undefined {
                *slot = Rule::Undefined;
            }
        }
        regs[RIP] = Rule::Undefined;
        for (reg, rule) in row.registers() {
            let Some(slot) = regs.get_mut(usize::from(reg.0)) else {
                continue;
            };
            *slot = match rule {
                RegisterRule::Undefined => Rule::Undefined,
                RegisterRule::SameValue => Rule::Same,
                RegisterRule::Offset(o) => Rule::Offset(*o),
                RegisterRule::ValOffset(o) => Rule::ValOffset(*o),
                RegisterRule::Register(r) => Rule::Register(usize::from(r.0)),
                RegisterRule::Expression(e) => Rule::Expr(expr(e)?),
                RegisterRule::ValExpression(e) => Rule::ValExpr(expr(e)?),
                _ => return Err(Missing::Fatal),
            };
        }
        Ok(Rules {
            cfa,
            regs,
            signal: fde.is_signal_trampoline(),
        })
    }

    /// A DWARF expression of the call frame information, with `initial` pushed first:
    /// the location it names (libunwind's `eval_location_expr`).
    fn expression(&self, c: &Cursor, bytes: &[u8], initial: u64) -> Result<Loc, Fault> {
        let encoding = gimli::Encoding {
            format: gimli::Format::Dwarf32,
            version: 4,
            address_size: 8,
        };
        let mut eval =
            gimli::Expression(EndianSlice::new(bytes, LittleEndian)).evaluation(encoding);
        eval.set_initial_value(initial);
        let mut step = eval.evaluate().map_err(|_| Fault)?;
        // Each operation asks for at most one value; a bound keeps a looping expression
        // (DW_OP_skip backwards) finite.
        for _ in 0..4096 {
            step = match step {
                gimli::EvaluationResult::Complete => break,
                gimli::EvaluationResult::RequiresMemory { address, size, .. } => {
                    let v = self.read(address)?;
                    let v = if size >= 8 {
                        v
                    } else {
                        v & ((1u64 << (u32::from(size) * 8)) - 1)
                    };
                    eval.resume_with_memory(gimli::Value::Generic(v))
                        .map_err(|_| Fault)?
                }
                gimli::EvaluationResult::RequiresRegister { register, .. } => {
                    let v = self.register(c, usize::from(register.0))?;
                    eval.resume_with_register(gimli::Value::Generic(v))
                        .map_err(|_| Fault)?
                }
                _ => return Err(Fault),
            };
        }
        if !matches!(step, gimli::EvaluationResult::Complete) {
            return Err(Fault);
        }
        let pieces = eval.result();
        match pieces.first().map(|p| &p.location) {
            Some(gimli::Location::Address { address }) => Ok(Loc::Mem(*address)),
            Some(gimli::Location::Register { register }) if usize::from(register.0) < REGS => {
                Ok(Loc::Reg(usize::from(register.0)))
            }
            Some(gimli::Location::Value { value }) => {
                Ok(Loc::Val(value.to_u64(!0).map_err(|_| Fault)?))
            }
            _ => Err(Fault),
        }
    }

    /// libunwind's `apply_reg_state`: the caller's registers from the rules. Ok(true)
    /// when there is a caller, Ok(false) at the end of the stack.
    fn apply(&self, c: &mut Cursor, rules: &Rules<&[u8]>) -> Result<bool, Fault> {
        let (prev_ip, prev_cfa) = (c.ip, c.cfa);
        let cfa = match rules.cfa {
            // rsp without a rule of its own is the canonical frame address itself.
            Cfa::RegOffset(RSP, off) if matches!(rules.regs[RSP], Rule::Same) => {
                c.cfa.wrapping_add_signed(off)
            }
            Cfa::RegOffset(r, off) => self.register(c, r)?.wrapping_add_signed(off),
            Cfa::Expr(e) => match self.expression(c, e, 0)? {
                Loc::Mem(a) => a,
                _ => return Err(Fault),
            },
        };
        let mut loc = c.loc;
        for i in 0..REGS {
            loc[i] = match rules.regs[i] {
                Rule::Same => loc[i],
                Rule::Undefined => Loc::Null,
                Rule::Offset(o) => Loc::Mem(cfa.wrapping_add_signed(o)),
                Rule::ValOffset(o) => Loc::Val(cfa.wrapping_add_signed(o)),
                // libunwind copies from the locations being filled in.
                Rule::Register(r) => *loc.get(r).ok_or(Fault)?,
                Rule::Expr(e) => self.expression(c, e, cfa)?,
                Rule::ValExpr(e) => match self.expression(c, e, cfa)? {
                    Loc::Mem(v) | Loc::Val(v) => Loc::Val(v),
                    _ => return Err(Fault),
                },
            };
        }
        c.loc = loc;
        c.cfa = cfa;
        let more = if loc[RIP] == Loc::Null {
            c.ip = 0;
            false
        } else {
            c.ip = self.get(loc[RIP])?;
            true
        };
        if c.ip == prev_ip && c.cfa == prev_cfa {
            return Err(Fault);
        }
        Ok(more)
    }

    /// libunwind's `unw_step` on x86_64: Ok(true) when it found a caller.
    fn step(&mut self, c: &mut Cursor) -> Result<bool, Fault> {
        c.signal = false;
        let lookup = c.ip.wrapping_sub(u64::from(c.use_prev_instr));
        match self.rules(lookup) {
            Ok(rules) => {
                c.signal = rules.signal;
                c.use_prev_instr = !rules.signal;
                let more = self.apply(c, &rules)?;
                // The ABI marks the outermost frame with an undefined rbp too.
                if c.loc[RBP] == Loc::Null {
                    c.ip = 0;
                    return Ok(false);
                }
                Ok(more)
            }
            Err(Missing::Fatal) => Err(Fault),
            Err(Missing::NoInfo) => self.guess(c),
        }
    }

    /// libunwind's way on for code without call frame information: a PLT entry
    /// returns to the word at the stack pointer; otherwise rbp is taken for a frame
    /// pointer when it points at most 16 KiB above the frame.
    fn guess(&self, c: &mut Cursor) -> Result<bool, Fault> {
        let (prev_ip, prev_cfa) = (c.ip, c.cfa);
        let mut invalid_prev_ip = false;
        if self.is_plt_entry(c.ip) {
            c.loc[RIP] = Loc::Mem(c.cfa);
            c.cfa = c.cfa.wrapping_add(8);
        } else if c.loc[RBP] == Loc::Null {
            c.loc = [Loc::Null; REGS];
        } else {
            let rbp = self.get(c.loc[RBP])?;
            // The code at the address is not readable: a call through a bad pointer,
            // whose return address is still at the stack pointer.
            invalid_prev_ip = !matches!(self.memory(prev_ip), Ok(Some(_)));
            let (rbp_loc, rsp_loc, rip_loc);
            if rbp == 0 && !invalid_prev_ip {
                (rbp_loc, rsp_loc, rip_loc) = (Loc::Null, Loc::Null, Loc::Null);
            } else {
                let mut fixed = None;
                if invalid_prev_ip {
                    if let Ok(rsp) = self.get(c.loc[RSP]) {
                        if let Ok(Some(new_ip)) = self.memory(rsp) {
                            if let Ok(Some(_)) = self.memory(new_ip) {
                                fixed = Some(rsp);
                            }
                        }
                    }
                }
                match fixed {
                    Some(rsp) => {
                        c.cfa = c.cfa.wrapping_add(8);
                        (rbp_loc, rsp_loc, rip_loc) = (Loc::Mem(rbp), Loc::Mem(rsp), Loc::Mem(rsp));
                    }
                    None => {
                        if self.memory(rbp).is_err() || rbp < c.cfa || rbp - c.cfa > 0x4000 {
                            (rbp_loc, rip_loc) = (Loc::Null, Loc::Null);
                        } else {
                            (rbp_loc, rip_loc) = (Loc::Mem(rbp), Loc::Mem(rbp.wrapping_add(8)));
                        }
                        rsp_loc = Loc::Null;
                        c.cfa = c.cfa.wrapping_add(16);
                    }
                }
            }
            c.loc = [Loc::Null; REGS];
            c.loc[RBP] = rbp_loc;
            c.loc[RSP] = rsp_loc;
            c.loc[RIP] = rip_loc;
            c.use_prev_instr = true;
        }
        if c.loc[RBP] == Loc::Null && !invalid_prev_ip {
            return Ok(false);
        }
        // Without a return address the caller is at 0, which perf leaves out, and
        // nothing lies beyond it.
        let more = c.loc[RIP] != Loc::Null;
        c.ip = if more { self.get(c.loc[RIP])? } else { 0 };
        if c.ip == prev_ip && c.cfa == prev_cfa {
            return Err(Fault);
        }
        Ok(more)
    }

    /// A PLT entry: `jmp *disp(%rip)`, `push $n`, `jmp` to the PLT's start.
    fn is_plt_entry(&self, ip: u64) -> bool {
        let (Ok(Some(w0)), Ok(Some(w1))) = (self.memory(ip), self.memory(ip.wrapping_add(8)))
        else {
            return false;
        };
        w0 & 0xffff == 0x25ff && (w0 >> 48) & 0xff == 0x68 && (w1 >> 24) & 0xff == 0xe9
    }

    /// perf's `get_entries`: the sampled address, then each caller's address less one
    /// (as it is after a signal frame), without the frames at 0.
    fn frames(mut self) -> Vec<u64> {
        let mut c = Cursor {
            loc: std::array::from_fn(Loc::Reg),
            cfa: self.state.sp,
            ip: self.state.ip,
            use_prev_instr: false,
            signal: false,
        };
        let mut ips = vec![self.state.ip];
        while ips.len() < MAX_FRAMES {
            if !matches!(self.step(&mut c), Ok(true)) {
                break;
            }
            let ip = self.get(c.loc[RIP]).unwrap_or(c.ip);
            ips.push(if c.signal { ip } else { ip.wrapping_sub(1) });
        }
        ips.retain(|&ip| ip != 0);
        ips
    }
}

/// The registers that the call frame instructions of `fde` (its CIE's, then its own up
/// to the row holding `svma`) leave undefined with `DW_CFA_undefined`, which gimli's
/// rows do not tell from registers that never had a rule.
fn undefined_registers<R: gimli::Reader>(
    eh_frame: &EhFrame<R>,
    bases: &BaseAddresses,
    fde: &gimli::FrameDescriptionEntry<R>,
    svma: u64,
) -> [bool; REGS] {
    use gimli::CallFrameInstruction as I;
    /// `DW_CFA_remember_state` nests no deeper than this (gimli's own bound is lower).
    const MAX_REMEMBERED: usize = 64;
    let mut undefined = [false; REGS];
    let mut initial = [false; REGS];
    let mut remembered: Vec<[bool; REGS]> = Vec::new();
    let cie = fde.cie();
    let mut at = fde.initial_address();
    for in_fde in [false, true] {
        if in_fde {
            initial = undefined;
        }
        let mut instructions = if in_fde {
            fde.instructions(eh_frame, bases)
        } else {
            cie.instructions(eh_frame, bases)
        };
        while let Ok(Some(i)) = instructions.next() {
            let mut set = |r: gimli::Register, v: bool| {
                if let Some(slot) = undefined.get_mut(usize::from(r.0)) {
                    *slot = v;
                }
            };
            match i {
                // The row holding `svma` ends where the location passes it.
                I::SetLoc { address } if in_fde => {
                    if address > svma {
                        break;
                    }
                    at = address;
                }
                I::AdvanceLoc { delta } if in_fde => {
                    let next = at.wrapping_add(u64::from(delta) * cie.code_alignment_factor());
                    if next > svma {
                        break;
                    }
                    at = next;
                }
                I::Undefined { register } => set(register, true),
                I::SameValue { register }
                | I::Offset { register, .. }
                | I::OffsetExtendedSf { register, .. }
                | I::ValOffset { register, .. }
                | I::ValOffsetSf { register, .. }
                | I::Expression { register, .. }
                | I::ValExpression { register, .. }
                | I::Register {
                    dest_register: register,
                    ..
                } => set(register, false),
                I::Restore { register } => {
                    let v = initial.get(usize::from(register.0)).copied();
                    set(register, v.unwrap_or(false));
                }
                I::RememberState if remembered.len() < MAX_REMEMBERED => {
                    remembered.push(undefined);
                }
                I::RestoreState => {
                    if let Some(state) = remembered.pop() {
                        undefined = state;
                    }
                }
                _ => {}
            }
        }
    }
    undefined
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
        assert_eq!((st.regs[RBP], st.sp, st.ip), (Some(0x600), 0x700, 0x800));
        // DWARF's rdx (1) is perf's DX (3), rbx (3) is BX (1), r8 (8) comes right after
        // SS (the 12th value), r15 is the last.
        assert_eq!(st.regs[1], Some(0x300));
        assert_eq!(st.regs[3], Some(0x100));
        assert_eq!(st.regs[8], Some(0xc00));
        assert_eq!(st.regs[15], Some(0x1300));
        assert_eq!(s.user_regs.get(12, s.endian), None);
        // A kernel thread's sample: ABI none, no registers, nothing to unwind.
        s.user_regs.abi = 0;
        assert!(UserState::of(&s).is_none());
    }

    /// `DW_CFA_undefined` holds from its row on, is undone by a rule for the register
    /// and comes back with `DW_CFA_restore_state`; gimli's rows show none of it.
    #[test]
    fn registers_made_undefined_are_told_from_registers_without_a_rule() {
        // A CIE without augmentation (code alignment 1, data alignment -8, return
        // address in r16, CFA = rsp + 8, rip at CFA - 8), then an FDE for 0x1000..0x1010.
        let mut cie = vec![0, 0, 0, 0, 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1, 0, 0];
        let mut eh = (cie.len() as u32).to_le_bytes().to_vec();
        eh.append(&mut cie);
        let fde_at = eh.len();
        let mut fde = (fde_at as u32 + 4).to_le_bytes().to_vec();
        fde.extend(0x1000u64.to_le_bytes());
        fde.extend(0x10u64.to_le_bytes());
        fde.extend([
            0x07, 3,    // undefined rbx
            0x44, // advance to 0x1004
            0x0a, // remember_state
            0x83, 2,    // rbx at CFA - 16
            0x44, // advance to 0x1008
            0x0b, // restore_state: rbx undefined again
            0x07, 6, // undefined rbp
            0, 0,
        ]);
        eh.extend((fde.len() as u32).to_le_bytes());
        eh.append(&mut fde);
        eh.extend([0, 0, 0, 0]);
        let mut eh_frame = EhFrame::new(&eh, LittleEndian);
        eh_frame.set_address_size(8);
        let bases = BaseAddresses::default();
        let fde = eh_frame
            .fde_from_offset(
                &bases,
                gimli::EhFrameOffset(fde_at),
                EhFrame::cie_from_offset,
            )
            .unwrap();
        let undefined = |svma| {
            let u = undefined_registers(&eh_frame, &bases, &fde, svma);
            (0..REGS).filter(|&r| u[r]).collect::<Vec<_>>()
        };
        assert_eq!(undefined(0x1000), [3]);
        assert_eq!(undefined(0x1003), [3]);
        assert_eq!(undefined(0x1004), Vec::<usize>::new());
        assert_eq!(undefined(0x1008), [3, 6]);
        assert_eq!(undefined(0x100f), [3, 6]);
        // gimli's row at 0x1000 has a rule for rip only.
        let mut ctx = gimli::UnwindContext::new();
        let row = fde
            .unwind_info_for_address(&eh_frame, &bases, &mut ctx, 0x1000)
            .unwrap();
        let regs: Vec<u16> = row.registers().map(|(r, _)| r.0).collect();
        assert_eq!(regs, [16]);
    }
}
