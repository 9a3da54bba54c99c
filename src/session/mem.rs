//! `mem`: the slab allocations of a trace.dat summed per call site, as `trace-cmd mem`
//! prints them.
//!
//! The records are read in time order. `kmem:kmalloc`, `kmalloc_node`,
//! `kmem_cache_alloc` and `kmem_cache_alloc_node` add `bytes_alloc` and `bytes_req` to the
//! function containing their `call_site` (named with the file's kallsyms, the function
//! map `report` uses) and remember the pointer; `kmem:kfree` and `kmem_cache_free` of a
//! remembered pointer take its bytes back from the function that allocated it. Per
//! function the table shows what is still allocated at the end (and the waste: allocated
//! minus requested), the totals, and the largest amounts held at once.
//!
//! Rows come in trace-cmd's order: by final waste, largest first; equal wastes keep the
//! order of trace-cmd's 4096-bucket hash of the function names (buckets in ascending
//! order, the newest name first within a bucket), which is computed here the same way so
//! the output is the same byte for byte. A function is one kallsyms symbol: two symbols
//! that share a name (static functions of different files) are two rows, as in trace-cmd.
//! A call site outside every symbol (trace-cmd stops there) gets a row named by its
//! address in hex.

use std::collections::HashMap;
use std::io::{self, Write};

use super::analysis::{open_records, read_error, Analysis, AnalysisError};
use crate::render::tracecmd::{read_uint, Catalog, DatCatalog, DatSource, FieldSpec, RecordSource};

/// One call site's sums. Amounts wrap as trace-cmd's unsigned longs do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemRow {
    /// The function (or `0x...` when no symbol contains the call site).
    pub func: String,
    /// Still allocated at the end minus still requested.
    pub waste: u64,
    /// Bytes still allocated at the end.
    pub alloc: u64,
    /// Bytes still requested at the end.
    pub req: u64,
    /// Bytes allocated over the whole trace.
    pub total_alloc: u64,
    /// Bytes requested over the whole trace.
    pub total_req: u64,
    /// Most bytes allocated at once.
    pub max_alloc: u64,
    /// Most bytes requested at once.
    pub max_req: u64,
    /// `max_alloc - max_req`.
    pub max_waste: u64,
}

/// What the allocation events of a file add up to.
#[derive(Debug, Clone, Default)]
pub struct MemSummary {
    /// The rows, in trace-cmd's order.
    pub rows: Vec<MemRow>,
    /// Sub-buffers skipped, one line each, for the caller to show.
    pub warnings: Vec<String>,
}

/// The fields of one allocation event: call_site, bytes_req, bytes_alloc, ptr.
type AllocFields = [Option<FieldSpec>; 4];

/// Sum the allocation events of the top buffer of the file at `path`.
pub fn mem_summary(path: &std::path::Path) -> Result<MemSummary, AnalysisError> {
    let dat = open_records(path, Analysis::Mem)?;
    let catalog = DatCatalog::from_dat(&dat);
    let endian = catalog.endian();
    let id = |name: &str| catalog.registry().by_name("kmem", name).map(|s| s.id);
    let alloc_fields = |ev: &str| -> Option<(u16, AllocFields)> {
        let id = id(ev)?;
        let f = |n: &str| catalog.field(id, n);
        Some((
            id,
            [f("call_site"), f("bytes_req"), f("bytes_alloc"), f("ptr")],
        ))
    };
    let allocs: Vec<(u16, AllocFields)> = [
        "kmalloc",
        "kmalloc_node",
        "kmem_cache_alloc",
        "kmem_cache_alloc_node",
    ]
    .into_iter()
    .filter_map(alloc_fields)
    .collect();
    let frees: Vec<(u16, Option<FieldSpec>)> = ["kfree", "kmem_cache_free"]
        .into_iter()
        .filter_map(|ev| {
            let id = id(ev)?;
            Some((id, catalog.field(id, "ptr")))
        })
        .collect();

    let mut table = Table::default();
    let mut names: HashMap<u64, usize> = HashMap::new();
    let mut source = DatSource::open(&dat, 0).map_err(AnalysisError::Open)?;
    let mut any = false;
    let read_err = read_error(path);
    while source.peek_ts().map_err(read_err)?.is_some() {
        let Some(taken) = source.take() else { break };
        any = true;
        let rec = taken.rec;
        let Some(ev) = rec.event_id(endian) else {
            continue;
        };
        let num =
            |f: Option<FieldSpec>| f.and_then(|f| read_uint(rec.data, f, endian)).unwrap_or(0);
        if let Some((_, f)) = allocs.iter().find(|(i, _)| *i == ev) {
            let site = num(f[0]);
            let func = *names
                .entry(site)
                .or_insert_with(|| match catalog.function(site) {
                    Some((name, start)) => table.func(name, start),
                    None => table.func(&format!("0x{site:x}"), site),
                });
            // trace-cmd keeps the request as an unsigned int and the allocation as an int.
            let req = u64::from(num(f[1]) as u32);
            let alloc = num(f[2]) as i32 as i64 as u64;
            table.alloc(func, num(f[3]), req, alloc);
        } else if let Some((_, f)) = frees.iter().find(|(i, _)| *i == ev) {
            table.free(num(*f));
        }
    }
    if !any {
        return Err(AnalysisError::NoRecords {
            analysis: Analysis::Mem,
            path: path.to_path_buf(),
        });
    }
    Ok(MemSummary {
        rows: table.rows(),
        warnings: source.take_warnings(),
    })
}

/// Write `rows` as `trace-cmd mem` prints them.
pub fn write_mem(rows: &[MemRow], out: &mut dyn Write) -> io::Result<()> {
    out.write_all(
        b"                Function            \tWaste\tAlloc\treq\t\tTotAlloc     TotReq\t\t\
          MaxAlloc     MaxReq\tMaxWaste\n                --------            \t-----\t-----\t\
          ---\t\t--------     ------\t\t--------     ------\t--------\n",
    )?;
    for r in rows {
        // trace-cmd prints the unsigned sums with %ld.
        let s = |v: u64| v as i64;
        writeln!(
            out,
            "{:>32}\t{}\t{}\t{}\t\t{:>8}   {:>8}\t\t{:>8}   {:>8}\t{}",
            r.func,
            s(r.waste),
            s(r.alloc),
            s(r.req),
            s(r.total_alloc),
            s(r.total_req),
            s(r.max_alloc),
            s(r.max_req),
            s(r.max_waste)
        )?;
    }
    Ok(())
}

/// A function's running sums.
#[derive(Debug, Default)]
struct Func {
    name: String,
    total_alloc: u64,
    total_req: u64,
    cur_alloc: u64,
    cur_req: u64,
    max_alloc: u64,
    max_req: u64,
}

/// The functions seen (in order of first allocation) and the live pointers.
#[derive(Debug, Default)]
struct Table {
    funcs: Vec<Func>,
    by_symbol: HashMap<(u64, String), usize>,
    /// pointer -> (function, alloc, req)
    live: HashMap<u64, (usize, u64, u64)>,
}

impl Table {
    /// The index of the function `name` starting at `start`, made on first use.
    fn func(&mut self, name: &str, start: u64) -> usize {
        let n = self.funcs.len();
        *self
            .by_symbol
            .entry((start, name.to_string()))
            .or_insert_with(|| {
                self.funcs.push(Func {
                    name: name.to_string(),
                    ..Func::default()
                });
                n
            })
    }

    fn alloc(&mut self, func: usize, ptr: u64, req: u64, alloc: u64) {
        let f = &mut self.funcs[func];
        f.total_alloc = f.total_alloc.wrapping_add(alloc);
        f.total_req = f.total_req.wrapping_add(req);
        f.cur_alloc = f.cur_alloc.wrapping_add(alloc);
        f.cur_req = f.cur_req.wrapping_add(req);
        f.max_alloc = f.max_alloc.max(f.cur_alloc);
        f.max_req = f.max_req.max(f.cur_req);
        // A pointer allocated again without a free seen in between now belongs to the
        // new allocation only.
        self.live.insert(ptr, (func, alloc, req));
    }

    fn free(&mut self, ptr: u64) {
        if let Some((func, alloc, req)) = self.live.remove(&ptr) {
            let f = &mut self.funcs[func];
            f.cur_alloc = f.cur_alloc.wrapping_sub(alloc);
            f.cur_req = f.cur_req.wrapping_sub(req);
        }
    }

    /// The rows in trace-cmd's order (see the module documentation).
    fn rows(self) -> Vec<MemRow> {
        let mut order: Vec<(u32, usize)> = self
            .funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (name_bucket(&f.name), i))
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut rows: Vec<MemRow> = order
            .into_iter()
            .map(|(_, i)| {
                let f = &self.funcs[i];
                MemRow {
                    func: f.name.clone(),
                    waste: f.cur_alloc.wrapping_sub(f.cur_req),
                    alloc: f.cur_alloc,
                    req: f.cur_req,
                    total_alloc: f.total_alloc,
                    total_req: f.total_req,
                    max_alloc: f.max_alloc,
                    max_req: f.max_req,
                    max_waste: f.max_alloc.wrapping_sub(f.max_req),
                }
            })
            .collect();
        // Stable, as glibc's qsort (a merge sort) is for trace-cmd's table.
        rows.sort_by_key(|r| std::cmp::Reverse(r.waste));
        rows
    }
}

/// trace-cmd's bucket for a name: its bytes XORed into a 4-byte word (byte i into byte
/// i mod 4, little-endian), through `trace_hash`, masked to 12 bits.
fn name_bucket(name: &str) -> u32 {
    let mut key = [0u8; 4];
    for (i, b) in name.bytes().enumerate() {
        key[i & 3] ^= b;
    }
    trace_hash(u32::from_le_bytes(key)) & 0xfff
}

/// The integer hash trace-cmd's tables use (after Paul Hsieh's SuperFastHash); its
/// bucket order is the order trace-cmd prints ties in (`mem`, `report -w`).
pub(crate) fn trace_hash(val: u32) -> u32 {
    let mut hash: u32 = 12_546_869;
    hash = hash.wrapping_add(val & 0xffff);
    let tmp = (val >> 16) ^ hash;
    hash = (hash << 16) ^ tmp;
    hash = hash.wrapping_add(hash >> 11);
    hash ^= hash << 3;
    hash = hash.wrapping_add(hash >> 5);
    hash ^= hash << 4;
    hash = hash.wrapping_add(hash >> 17);
    hash ^= hash << 25;
    hash = hash.wrapping_add(hash >> 6);
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frees_return_bytes_to_the_allocating_function() {
        let mut t = Table::default();
        let a = t.func("a", 0x10);
        let b = t.func("b", 0x20);
        t.alloc(a, 0x1000, 10, 16);
        t.alloc(a, 0x2000, 20, 32);
        t.alloc(b, 0x3000, 8, 8);
        t.free(0x1000);
        t.free(0x9999);
        let rows = t.rows();
        let ra = rows.iter().find(|r| r.func == "a").unwrap();
        assert_eq!((ra.alloc, ra.req, ra.waste), (32, 20, 12));
        assert_eq!((ra.total_alloc, ra.max_alloc, ra.max_waste), (48, 48, 18));
        assert_eq!(rows[0].func, "a", "largest waste first");
    }

    #[test]
    fn same_name_different_symbols_are_two_rows() {
        let mut t = Table::default();
        assert_ne!(t.func("init_once", 0x10), t.func("init_once", 0x90));
        assert_eq!(t.func("x", 1), t.func("x", 1));
    }
}
