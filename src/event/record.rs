use crate::endian::Endianness;

/// One event as read from any source: a borrowed view of its payload.
///
/// `data` starts at the event's common fields (`common_type` first) and is exactly the
/// payload the kernel wrote, padding included. Sources hand these out without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// CPU whose buffer held the event.
    pub cpu: u32,
    /// Timestamp in trace-clock units (nanoseconds for the time clocks).
    pub ts: u64,
    /// The payload, starting at `common_type`.
    pub data: &'a [u8],
}

impl<'a> Record<'a> {
    /// The `common_type` field (the event id), read as a little- or big-endian u16 at offset 0.
    ///
    /// Every kernel since tracefs has had `unsigned short common_type; offset:0; size:2`.
    pub fn event_id(&self, endian: Endianness) -> Option<u16> {
        Some(endian.u16(self.data.get(0..2)?))
    }
}
