//! The values of `perf record -z`/`--compression-level` and `--mmap-flush` as perf 6.1
//! reads them: C's number parsers, no error for any text.

use tracectl::perf::switch_output::{tagged_value, SIZE_TAGS};

/// The most zstd level perf records with; a higher one is lowered to it.
const MAX_LEVEL: u32 = 22;

/// C's `strtol`/`strtoul` up to the end of the number: leading white space, a sign, then
/// digits of `radix` (0: `0x` hexadecimal, a leading `0` octal, else decimal). Returns
/// the magnitude (saturated at `u64::MAX`), whether it was negative, and the index after
/// the last digit (0 when no digit was read, as C sets its end pointer).
fn c_number(s: &str, radix: u32) -> (u64, bool, usize) {
    let b = s.as_bytes();
    let mut i = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'))
        .count();
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let hex = b.get(i) == Some(&b'0')
        && matches!(b.get(i + 1), Some(b'x' | b'X'))
        && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
    let (radix, start) = match (radix, hex, b.get(i)) {
        (0 | 16, true, _) => (16, i + 2),
        (0, false, Some(b'0')) => (8, i),
        (0, _, _) => (10, i),
        (r, _, _) => (r, i),
    };
    let mut v: u64 = 0;
    let mut end = start;
    while let Some(d) = b.get(end).and_then(|&c| (c as char).to_digit(radix)) {
        v = v
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .unwrap_or(u64::MAX);
        end += 1;
    }
    if end == start {
        return (0, false, 0);
    }
    (v, negative, end)
}

/// C's `strtol(s, NULL, 0)`, saturated at the range of a `long`.
fn strtol(s: &str) -> i64 {
    match c_number(s, 0) {
        (v, false, _) => i64::try_from(v).unwrap_or(i64::MAX),
        (v, true, _) if v > i64::MAX as u64 => i64::MIN,
        (v, true, _) => -(v as i64),
    }
}

/// The zstd level of `-z[=LEVEL]`/`--compression-level[=LEVEL]`: a C number (`0x`
/// hexadecimal, `0` octal) cut to an unsigned int; no number or 0 is level 1, and more
/// than 22 (a negative number too) is 22.
pub fn compression_level(s: &str) -> u32 {
    match strtol(s) as u32 {
        0 => 1,
        l => l.min(MAX_LEVEL),
    }
}

/// `--mmap-flush`'s value as perf keeps it (a C `int`): a size with a B, K, M or G
/// suffix, else a C number; 0 (or no number) is 1, and more than a quarter of a ring of
/// `ring_bytes` (its data and control page) is that quarter. Sizes are cut to 32 bits
/// as perf cuts them, and a negative value stays negative.
pub fn mmap_flush(s: &str, ring_bytes: u64) -> i32 {
    // perf's all-ones refusal and no size at all both read as -1.
    let tagged = tagged_value(s, &SIZE_TAGS).map_or(-1, |v| v as u32 as i32);
    let flush = match tagged {
        -1 => strtol(s) as i32,
        v => v,
    };
    let flush = if flush == 0 { 1 } else { flush };
    flush.min((ring_bytes as i32) / 4)
}

/// The least bytes a ring holds before it is read, from `--mmap-flush`'s value: perf
/// widens its `int` to 64 bits, so a negative one waits for the end of the recording.
pub fn flush_bytes(flush: i32) -> u64 {
    i64::from(flush) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf 6.1 records `-z` at level 1, `--compression-level=23` and `=-3` at 22, and
    /// `=abc` at 1 (strtol reads no number); `0x10` is 16 and `010` is 8.
    #[test]
    fn compression_levels_as_perf_reads_them() {
        for (text, level) in [
            ("1", 1),
            ("", 1),
            ("abc", 1),
            ("0", 1),
            ("5", 5),
            (" 7x", 7),
            ("22", 22),
            ("23", 22),
            ("-3", 22),
            ("0x10", 16),
            ("010", 8),
            ("4294967297", 1),
        ] {
            assert_eq!(compression_level(text), level, "{text:?}");
        }
    }

    /// A ring of 128 data pages and its control page: 528384 bytes, a quarter of which
    /// (132096) is the most perf waits for.
    #[test]
    fn mmap_flush_sizes_as_perf_reads_them() {
        let ring = 129 * 4096;
        for (text, flush) in [
            ("1", 1),
            ("0", 1),
            ("abc", 1),
            ("", 1),
            ("4096", 4096),
            ("0x100", 256),
            ("16K", 16384),
            ("16B", 16),
            ("1M", 132096),
            ("200000", 132096),
            // Lower case is no unit: strtol reads the number alone.
            ("4k", 4),
            // B is looked for first: it does not follow the number, so no unit.
            ("1KB", 1),
            ("B", 1),
            (" 2K", 2048),
            // The size is cut to an int: 4 GiB is 0, so 1; 3 GiB is negative.
            ("4G", 1),
            ("3G", -1073741824),
            ("-5", -5),
            ("-1K", -1),
        ] {
            assert_eq!(mmap_flush(text, ring), flush, "{text:?}");
        }
        assert_eq!(mmap_flush("1M", 5 * 4096), 5120);
        assert_eq!(flush_bytes(4096), 4096);
        assert_eq!(flush_bytes(-5), u64::MAX - 4);
    }
}
