//! The instruction at a sample's address, read and decoded where perf 6.1 does it for
//! `perf script -F insn,insnlen` (`arch_fetch_insn` of tools/perf/arch/x86/util): up
//! to 16 bytes at the address's offset in the file of the object mapping it
//! (`thread__memcpy`, `dso__data_read_offset`), decoded in 64-bit mode for a 64-bit
//! ELF file and 32-bit mode for a 32-bit one.
//!
//! perf reads a user object's bytes from its copy in the build-id cache, else from the
//! file at the recorded path (`try_to_open_dso`), whichever file its symbols came from
//! (a debug file has no code). A kernel address (2^63 and above on x86_64) is never
//! read: perf takes the kernel's symbols from kallsyms, which has no code. Neither
//! is a JIT's perf map (perf knows it as a list of symbols, not a file of code).

use std::collections::HashMap;
use std::path::Path;

use super::machine::{FoundFile, Machine, ObjectId};
use super::symsrc::{self, BinaryType, OpenedFile};
use super::x86_insn::{insn_length, Mode};

/// How many bytes perf reads at a sample's address (`MAX_INSN`).
pub const INSN_BYTES: usize = 16;

/// The instruction perf finds at an address: its bytes and its length, 0 when perf
/// could not read or decode it (then it shows no bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampledInsn {
    /// The bytes read; the first `len` are the instruction.
    pub bytes: [u8; INSN_BYTES],
    /// The decoded length.
    pub len: usize,
}

impl SampledInsn {
    /// The instruction's bytes.
    pub fn insn(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The file an object's bytes are read from, and whether it is a 64-bit ELF file.
struct CodeFile {
    file: FoundFile,
    is_64_bit: bool,
}

/// The objects' files, opened when first read.
#[derive(Default)]
pub struct CodeFiles {
    files: HashMap<ObjectId, Option<CodeFile>>,
}

impl std::fmt::Debug for CodeFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeFiles")
            .field("objects", &self.files.len())
            .finish()
    }
}

/// perf's kernel addresses on x86_64 (`machine__kernel_ip`): 2^63 and above, which
/// keeps the PTI entry trampolines below the kernel's text with the kernel.
const KERNEL_START: u64 = 1 << 63;

impl CodeFiles {
    /// No files opened yet.
    pub fn new() -> CodeFiles {
        CodeFiles::default()
    }

    /// The instruction at `ip` in process `pid` of `machine` as perf 6.1 finds it.
    pub fn insn_at(&mut self, machine: &Machine, pid: i32, ip: u64) -> SampledInsn {
        let mut insn = SampledInsn {
            bytes: [0; INSN_BYTES],
            len: 0,
        };
        if ip == 0 || ip >= KERNEL_START {
            return insn;
        }
        let loc = machine.resolve(pid, super::data::abi::misc::USER, ip);
        let (Some(object), Some(name)) = (loc.object, loc.dso) else {
            return insn;
        };
        if name.starts_with("/tmp/perf-") {
            return insn;
        }
        let Some(code) = self
            .files
            .entry(object)
            .or_insert_with(|| code_file(machine, object))
        else {
            return insn;
        };
        let bytes = code.file.bytes();
        let Some(rest) = usize::try_from(loc.addr)
            .ok()
            .and_then(|at| bytes.get(at..))
        else {
            return insn;
        };
        let n = rest.len().min(INSN_BYTES);
        insn.bytes[..n].copy_from_slice(&rest[..n]);
        let mode = if code.is_64_bit {
            Mode::Bits64
        } else {
            Mode::Bits32
        };
        insn.len = insn_length(&insn.bytes[..n], mode).unwrap_or(0);
        insn
    }
}

/// The file perf reads `object`'s bytes from (see the module's text).
fn code_file(machine: &Machine, object: ObjectId) -> Option<CodeFile> {
    machine
        .search_files(object, |wanted, open| {
            [BinaryType::BuildIdCache, BinaryType::SystemPath]
                .into_iter()
                .find_map(|ty| {
                    let exists = |p: &Path, cache: bool| open(p, cache).is_some();
                    let path = symsrc::binary_type_path(ty, wanted, &exists, &|_| None)?;
                    open(&path, ty == BinaryType::BuildIdCache)
                })
                .map(|file| CodeFile {
                    is_64_bit: elf_is_64_bit(file.bytes()),
                    file,
                })
        })
        .flatten()
}

/// Whether ELF `data` is of class 64 (`ELFCLASS64`): perf decodes in the mode of the
/// object's symbol file, which is the class of the object; a file that is not ELF
/// counts as 64-bit, as perf's objects do until their symbols are read.
fn elf_is_64_bit(data: &[u8]) -> bool {
    data.get(..4) != Some(b"\x7fELF") || data.get(4) != Some(&1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elf_class() {
        assert!(elf_is_64_bit(b"\x7fELF\x02\x01"));
        assert!(!elf_is_64_bit(b"\x7fELF\x01\x01"));
        assert!(elf_is_64_bit(b"#!/bin/sh"));
    }
}
