//! The event model: `format` files, schemas, records and the print-fmt engine.

mod header;
mod record;

pub use header::{HeaderPage, HeaderPageError};
pub use record::Record;
