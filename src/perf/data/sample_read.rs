//! Samples that carry counter values (`PERF_SAMPLE_READ`, such as a group recorded with
//! a sampling leader, `-e '{a,b}:S'`): perf 6.1's session hands such a sample to its
//! tools once per value, each as a sample of the value's event whose period is how much
//! that counter grew since the last value of the same id (`deliver_sample_value`).

use std::collections::HashMap;

use super::abi::{read_format as rf, sample};
use super::{PerfData, Sample};

impl PerfData {
    /// The `(value, id)` pairs of a sample's READ block, by the attr's `read_format`
    /// (id 0 where the format has none).
    pub fn read_values(&self, s: &Sample<'_>) -> Vec<(u64, u64)> {
        let f = self.attrs()[s.attr].read_format;
        let e = self.endian();
        let word = |i: usize| s.read.get(i * 8..i * 8 + 8).map(|b| e.u64(b));
        let times = usize::from(f & rf::TOTAL_TIME_ENABLED != 0)
            + usize::from(f & rf::TOTAL_TIME_RUNNING != 0);
        let has_id = f & rf::ID != 0;
        if f & rf::GROUP == 0 {
            let id = if has_id { word(1 + times) } else { Some(0) };
            return word(0).zip(id).into_iter().collect();
        }
        let per_value = 1 + usize::from(has_id) + usize::from(f & rf::LOST != 0);
        let nr = word(0).unwrap_or(0) as usize;
        (0..nr)
            .map_while(|i| {
                let at = 1 + times + i * per_value;
                let id = if has_id { word(at + 1) } else { Some(0) };
                word(at).zip(id)
            })
            .collect()
    }
}

/// The last value seen of each counter id, to turn a READ sample into the samples perf
/// delivers.
#[derive(Debug, Default)]
pub struct ReadPeriods {
    last: HashMap<u64, u64>,
}

impl ReadPeriods {
    /// The samples perf makes of `s`: `s` itself when its attr does not sample READ;
    /// otherwise one per value whose id belongs to an event of the file, with that
    /// event's attr and the growth of its counter as the period, leaving out those
    /// that did not grow.
    pub fn split<'a>(&mut self, file: &PerfData, s: Sample<'a>) -> Vec<Sample<'a>> {
        if file.attrs()[s.attr].sample_type & sample::READ == 0 {
            return vec![s];
        }
        let mut out = Vec::new();
        for (value, id) in file.read_values(&s) {
            let Some(attr) = file.find_id(id) else {
                continue;
            };
            let last = self.last.insert(id, value).unwrap_or(0);
            let period = value.wrapping_sub(last);
            if period != 0 {
                out.push(Sample {
                    attr,
                    id,
                    period,
                    ..s
                });
            }
        }
        out
    }
}
