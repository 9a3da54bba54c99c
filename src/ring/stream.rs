//! A CPU's stream of sub-buffers, and the merge of all CPUs by timestamp.

use super::page::{Entry, PageError, PageLayout, SubBuffer};

/// The entries of one CPU's `trace_pipe_raw` bytes: whole sub-buffers back to back.
///
/// A malformed sub-buffer yields one [`PageError`] and decoding resumes at the next one.
#[derive(Debug, Clone)]
pub struct CpuStream<'a> {
    layout: PageLayout,
    bytes: &'a [u8],
    cpu: u32,
    next_page: u64,
    current: Option<SubBuffer<'a>>,
}

impl<'a> CpuStream<'a> {
    /// Decode `bytes` (concatenated sub-buffers of `layout.subbuf_size`) read from `cpu`.
    pub fn new(layout: PageLayout, cpu: u32, bytes: &'a [u8]) -> CpuStream<'a> {
        CpuStream {
            layout,
            bytes,
            cpu,
            next_page: 0,
            current: None,
        }
    }

    /// The CPU this stream reads.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }
}

impl<'a> Iterator for CpuStream<'a> {
    type Item = Result<Entry<'a>, PageError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(sb) = &mut self.current {
                match sb.next() {
                    Some(item) => return Some(item),
                    None => self.current = None,
                }
            }
            let size = self.layout.subbuf_size.max(1);
            let start = (self.next_page as usize).checked_mul(size)?;
            if start >= self.bytes.len() {
                return None;
            }
            let page = &self.bytes[start..(start + size).min(self.bytes.len())];
            let index = self.next_page;
            self.next_page += 1;
            match SubBuffer::new(self.layout, page, self.cpu, index) {
                Ok(sb) => self.current = Some(sb),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// K-way merge of per-CPU entry streams by timestamp.
///
/// Ties go to the lower CPU, as the kernel's `trace` file orders them: its iterator takes
/// the next CPU's entry only when its timestamp is strictly smaller. Errors pass through
/// as soon as their stream reaches them.
#[derive(Debug)]
pub struct Merge<I: Iterator> {
    streams: Vec<I>,
    heads: Vec<Option<I::Item>>,
    primed: bool,
}

impl<'a, I> Merge<I>
where
    I: Iterator<Item = Result<Entry<'a>, PageError>>,
{
    /// Merge `streams`, ordered by CPU (their order decides ties).
    pub fn new(streams: Vec<I>) -> Merge<I> {
        let heads = streams.iter().map(|_| None).collect();
        Merge {
            streams,
            heads,
            primed: false,
        }
    }
}

impl<'a, I> Iterator for Merge<I>
where
    I: Iterator<Item = Result<Entry<'a>, PageError>>,
{
    type Item = Result<Entry<'a>, PageError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if !self.primed {
            self.primed = true;
            for (h, s) in self.heads.iter_mut().zip(self.streams.iter_mut()) {
                *h = s.next();
            }
        }
        let mut best: Option<(usize, u64)> = None;
        for (i, h) in self.heads.iter().enumerate() {
            match h {
                None => {}
                Some(Err(_)) => {
                    best = Some((i, 0));
                    break;
                }
                Some(Ok(e)) => {
                    let ts = e.ts();
                    if best.map_or(true, |(_, b)| ts < b) {
                        best = Some((i, ts));
                    }
                }
            }
        }
        let (i, _) = best?;
        let next = self.streams[i].next();
        std::mem::replace(&mut self.heads[i], next)
    }
}
