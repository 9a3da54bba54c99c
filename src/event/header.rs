use std::fmt;

/// Layout of a ring-buffer sub-buffer header, from `events/header_page`.
///
/// Nothing about the page is hard-coded: the timestamp, the `commit` word (whose size is
/// the kernel's `long`) and the start and size of the data area all come from this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderPage {
    /// Offset of the u64 page timestamp.
    pub timestamp_offset: usize,
    /// Size of the page timestamp (8).
    pub timestamp_size: usize,
    /// Offset of the `commit` word.
    pub commit_offset: usize,
    /// Size of the `commit` word: the kernel's `sizeof(long)`, 4 or 8.
    pub commit_size: usize,
    /// Offset where records start.
    pub data_offset: usize,
    /// Size of the data area of one page as the kernel declares it (page size minus header).
    pub data_size: usize,
}

/// A `header_page` file that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPageError {
    /// What was wrong, naming the field.
    pub message: String,
}

impl fmt::Display for HeaderPageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "events/header_page: {}", self.message)
    }
}

impl std::error::Error for HeaderPageError {}

impl HeaderPage {
    /// Parse the text of `events/header_page`.
    pub fn parse(text: &str) -> Result<HeaderPage, HeaderPageError> {
        let mut ts = None;
        let mut commit = None;
        let mut data = None;
        for line in text.lines() {
            let Some((name, offset, size)) = parse_field_line(line) else {
                continue;
            };
            match name {
                "timestamp" => ts = Some((offset, size)),
                "commit" => commit = Some((offset, size)),
                "data" => data = Some((offset, size)),
                _ => {}
            }
        }
        let missing = |what: &str| HeaderPageError {
            message: format!("no `{what}` field (is this really events/header_page?)"),
        };
        let (timestamp_offset, timestamp_size) = ts.ok_or_else(|| missing("timestamp"))?;
        let (commit_offset, commit_size) = commit.ok_or_else(|| missing("commit"))?;
        let (data_offset, data_size) = data.ok_or_else(|| missing("data"))?;
        if commit_size != 4 && commit_size != 8 {
            return Err(HeaderPageError {
                message: format!("commit size {commit_size}, expected 4 or 8"),
            });
        }
        if timestamp_size != 8 {
            return Err(HeaderPageError {
                message: format!("timestamp size {timestamp_size}, expected 8"),
            });
        }
        Ok(HeaderPage {
            timestamp_offset,
            timestamp_size,
            commit_offset,
            commit_size,
            data_offset,
            data_size,
        })
    }

    /// The kernel's `sizeof(long)`, taken from the `commit` field.
    pub fn long_size(&self) -> usize {
        self.commit_size
    }

    /// Bytes in one whole sub-buffer as the header declares it (header plus data).
    pub fn page_size(&self) -> usize {
        self.data_offset + self.data_size
    }
}

/// The record header layout, from `events/header_event`.
///
/// The kernel has used 5 bits of type/length and 27 bits of time delta, with padding 29,
/// time extend 30 and absolute time stamp 31, since tracefs exists; reading the file
/// lets a decoder refuse a kernel that changes them instead of misreading its pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderEvent {
    /// Bits of the `type_len` field (5).
    pub type_len_bits: u32,
    /// Bits of the `time_delta` field (27).
    pub time_delta_bits: u32,
    /// `type_len` of padding / discarded records (29).
    pub padding: u32,
    /// `type_len` of a time extend (30).
    pub time_extend: u32,
    /// `type_len` of an absolute time stamp (31).
    pub time_stamp: u32,
    /// The largest `type_len` that encodes a data length (28).
    pub data_max_type_len: u32,
}

impl Default for HeaderEvent {
    fn default() -> Self {
        HeaderEvent {
            type_len_bits: 5,
            time_delta_bits: 27,
            padding: 29,
            time_extend: 30,
            time_stamp: 31,
            data_max_type_len: 28,
        }
    }
}

impl HeaderEvent {
    /// Parse the text of `events/header_event`; values the file does not mention keep the
    /// kernel's long-standing defaults.
    pub fn parse(text: &str) -> Result<HeaderEvent, HeaderPageError> {
        let mut h = HeaderEvent::default();
        let mut seen = false;
        let num =
            |v: &str| -> Option<u32> { v.split_whitespace().find_map(|w| w.parse::<u32>().ok()) };
        for line in text.lines() {
            let line = line.trim();
            let Some((key, val)) = line.split_once(':').or_else(|| line.split_once("==")) else {
                continue;
            };
            let key = key.trim();
            let val = val
                .trim()
                .trim_start_matches("type")
                .trim()
                .trim_start_matches("==");
            match key {
                "type_len" => h.type_len_bits = num(val).unwrap_or(h.type_len_bits),
                "time_delta" => h.time_delta_bits = num(val).unwrap_or(h.time_delta_bits),
                "padding" => h.padding = num(val).unwrap_or(h.padding),
                "time_extend" => h.time_extend = num(val).unwrap_or(h.time_extend),
                "time_stamp" => h.time_stamp = num(val).unwrap_or(h.time_stamp),
                k if k.starts_with("data max type_len") => {
                    h.data_max_type_len = num(val).unwrap_or(h.data_max_type_len)
                }
                _ => continue,
            }
            seen = true;
        }
        if !seen {
            return Err(HeaderPageError {
                message: "events/header_event has no `type_len`/`time_delta` lines".into(),
            });
        }
        if h.type_len_bits + h.time_delta_bits != 32 {
            return Err(HeaderPageError {
                message: format!(
                    "events/header_event: type_len {} + time_delta {} bits is not 32",
                    h.type_len_bits, h.time_delta_bits
                ),
            });
        }
        Ok(h)
    }
}

/// `\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;` -> ("timestamp", 0, 8)
fn parse_field_line(line: &str) -> Option<(&str, usize, usize)> {
    let rest = line.trim().strip_prefix("field:")?;
    let (decl, attrs) = rest.split_once(';')?;
    let name = decl
        .trim()
        .rsplit(|c: char| c.is_whitespace() || c == '*')
        .next()?;
    let mut offset = None;
    let mut size = None;
    for attr in attrs.split(';') {
        let attr = attr.trim();
        if let Some(v) = attr.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = attr.strip_prefix("size:") {
            size = v.trim().parse().ok();
        }
    }
    Some((name, offset?, size?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_32_bit_header_page() {
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                    \tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\
                    \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
                    \tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";
        let h = HeaderPage::parse(text).unwrap();
        assert_eq!((h.commit_size, h.data_offset, h.page_size()), (4, 12, 4096));
    }

    #[test]
    fn parses_header_event() {
        let text = "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\
                    \tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\
                    \ttime_stamp : type == 31\n\tdata max type_len  == 28\n";
        assert_eq!(HeaderEvent::parse(text).unwrap(), HeaderEvent::default());
        let odd = text.replace("== 29", "== 20").replace("== 28", "== 19");
        let h = HeaderEvent::parse(&odd).unwrap();
        assert_eq!((h.padding, h.data_max_type_len), (20, 19));
        assert!(HeaderEvent::parse("nothing here").is_err());
    }

    #[test]
    fn names_the_missing_field() {
        let err = HeaderPage::parse("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n")
            .unwrap_err();
        assert!(err.to_string().contains("`commit`"), "{err}");
    }
}
